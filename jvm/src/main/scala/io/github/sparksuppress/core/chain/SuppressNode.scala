package io.github.sparksuppress.core.chain

import io.github.sparksuppress.core._

/**
 * Kafka's suppress node inside a chain, over a [[Suppressor]]. Its stream time is the largest timestamp among the
 * records that reached it (below an aggregation: the aggregates' timestamps). The buffer time of a record is its
 * window's end under untilWindowCloses (whose time limit is the window's grace), its own timestamp under
 * untilTimeLimit. Released records carry their key's latest timestamp.
 *
 * On the wall clock (beyond Kafka, `wallClock`) the node's time is the wall time its caller last moved it to
 * ([[advance]]); records neither move it nor set their buffer time, which is that wall time.
 *
 * With `emitLate` (beyond Kafka, untilWindowCloses only) an update for a window that has closed (buffer time <=
 * stream time - time limit, the update itself counted) is not buffered, to leave at once as Kafka would let it out:
 * it leaves as a late record, after whatever became due with it.
 *
 * @param sizeOf
 *   the entry size counted against `maxBytes`
 * @param metrics
 *   where the buffer's samples go (Kafka samples it after every put and every eviction pass that evicted something)
 */
final class SuppressNode[K](
    val spec: SuppressionSpec,
    val untilWindowCloses: Boolean,
    sizeOf: ChainRecord[K] => Long,
    val wallClock: Boolean = false,
    emitLate: Boolean = false,
    metrics: SuppressionMetrics = new SuppressionMetrics
)(implicit keys: KeyOps[K])
    extends ChainNode[K] {

  // The buffered value is the record itself, so that a released tombstone keeps what the engine renders.
  val suppressor = new Suppressor[WindowedKey[K], ChainRecord[K]](spec, _.isTombstone, metrics)
  private[this] var time = Long.MinValue
  var droppedNullKeys: Long = 0L

  def streamTime: Long = time

  def restore(streamTime: Long): Unit = time = streamTime

  def process(record: ChainRecord[K], out: ChainOutput[K]): Unit = {
    // A KTable has no null keys; only a stream turned into a table could bring one, and Kafka drops it.
    if (record.key == null) { droppedNullKeys += 1; return }
    if (!wallClock && record.timestamp > time) time = record.timestamp
    val bufferTime =
      if (wallClock) time
      else if (!untilWindowCloses) record.timestamp
      else if (record.window == null) {
        throw new IllegalStateException(
          s"${spec.name}: untilWindowCloses needs windowed records; its input is not windowed"
        )
      } else record.window.end
    if (emitLate && bufferTime <= TimeMath.minus(time, spec.timeLimitMs)) {
      suppressor.evictExpired(time, new Release(out))
      out.late(record)
      return
    }
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

  override def followsEventTime: Boolean = !wallClock

  private final class Release(out: ChainOutput[K]) extends SuppressionEmitter[WindowedKey[K], ChainRecord[K]] {
    def emit(r: BufferedRecord[WindowedKey[K], ChainRecord[K]]): Unit = out.forward(r.value)
  }
}
