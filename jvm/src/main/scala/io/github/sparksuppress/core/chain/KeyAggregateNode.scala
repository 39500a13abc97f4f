package io.github.sparksuppress.core.chain

import io.github.sparksuppress.core.{Aggregation, KeyOps}

/**
 * Kafka's non-windowed aggregation node (`groupByKey().count()/reduce()/aggregate()`): one running aggregate per key,
 * a KTable. Every record with a key and a value forwards the key's new aggregate at once, stamped with the larger of
 * the record's timestamp and the aggregate's previous one; records with a null key or value are dropped. It never
 * waits, so stream time only records what reached it.
 *
 * @param valueOf
 *   what the aggregation reads from a record
 * @param render
 *   the value forwarded for (key, timestamp, buffer); it must not share the (mutable) buffer
 */
final class KeyAggregateNode[K, V, B](
    val aggregation: Aggregation[V, B],
    valueOf: ChainRecord[K] => V,
    render: (K, Long, B) => AnyRef
)(implicit keys: KeyOps[K])
    extends ChainNode[K] {

  /** A key's aggregate and the timestamp it carries. */
  final class Entry(var buffer: B, var timestamp: Long)

  val entries = new java.util.TreeMap[K, Entry](keys)
  var dropped: Long = 0L
  private[this] var time = Long.MinValue

  def streamTime: Long = time

  def restore(streamTime: Long): Unit = time = streamTime

  def restoreKey(key: K, buffer: B, timestamp: Long): Unit = entries.put(key, new Entry(buffer, timestamp))

  def process(record: ChainRecord[K], out: ChainOutput[K]): Unit = {
    if (record.key == null || record.isTombstone) { dropped += 1; return }
    if (record.timestamp > time) time = record.timestamp
    var e = entries.get(record.key)
    if (e == null) {
      e = new Entry(aggregation.add(aggregation.initial(), valueOf(record)), record.timestamp)
      entries.put(record.key, e)
    } else {
      e.buffer = aggregation.add(e.buffer, valueOf(record))
      if (record.timestamp > e.timestamp) e.timestamp = record.timestamp
    }
    out.forward(ChainRecord(record.key, null, render(record.key, e.timestamp, e.buffer), e.timestamp))
  }

  def advance(to: Long, out: ChainOutput[K]): Unit = if (to > time) time = to

  def nextDueStreamTime: Long = Long.MaxValue
}
