package io.github.sparksuppress.core.chain

import io.github.sparksuppress.core._

/**
 * Kafka's suppress node inside a chain, over a [[Suppressor]]. Its stream time is the largest timestamp among the
 * records that reached it (below an aggregation: the aggregates' timestamps). The buffer time of a record is its
 * window's end under untilWindowCloses (whose time limit is the window's grace), its own timestamp under
 * untilTimeLimit. Released records carry their key's latest timestamp.
 *
 * @param sizeOf
 *   the entry size counted against `maxBytes`
 */
final class SuppressNode[K](
    val spec: SuppressionSpec,
    val untilWindowCloses: Boolean,
    sizeOf: ChainRecord[K] => Long
)(implicit keys: KeyOps[K])
    extends ChainNode[K] {

  // The buffered value is the record itself, so that a released tombstone keeps what the engine renders.
  val suppressor = new Suppressor[WindowedKey[K], ChainRecord[K]](spec, _.isTombstone)
  private[this] var time = Long.MinValue
  var droppedNullKeys: Long = 0L

  def streamTime: Long = time

  def restore(streamTime: Long): Unit = time = streamTime

  def process(record: ChainRecord[K], out: ChainOutput[K]): Unit = {
    // A KTable has no null keys; only a stream turned into a table could bring one, and Kafka drops it.
    if (record.key == null) { droppedNullKeys += 1; return }
    if (record.timestamp > time) time = record.timestamp
    val bufferTime =
      if (!untilWindowCloses) record.timestamp
      else if (record.window == null) {
        throw new IllegalStateException(
          s"${spec.name}: untilWindowCloses needs windowed records; its input is not windowed"
        )
      } else record.window.end
    suppressor.put(
      WindowedKey(record.key, record.window),
      record,
      record.timestamp,
      bufferTime,
      sizeOf(record),
      time,
      new Release(out)
    )
  }

  def advance(to: Long, out: ChainOutput[K]): Unit =
    if (to > time) {
      time = to
      suppressor.evictExpired(time, new Release(out))
    }

  def nextDueStreamTime: Long = suppressor.nextDueStreamTime

  private final class Release(out: ChainOutput[K]) extends SuppressionEmitter[WindowedKey[K], ChainRecord[K]] {
    def emit(r: BufferedRecord[WindowedKey[K], ChainRecord[K]]): Unit = out.forward(r.value)
  }
}
