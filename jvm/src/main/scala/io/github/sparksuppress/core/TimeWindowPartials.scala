package io.github.sparksuppress.core

import scala.collection.mutable.ArrayBuffer

/**
 * One key's records of one input partition, combined per time window before the shuffle, so that the state
 * operator receives one partial aggregate per key, window and partition instead of every record.
 *
 * Kafka drops a record for a window when `end + grace <= stream time`, stream time including the record. Over
 * one key's records in arrival order that stream time is `max(A, m)`, where `m` is the largest timestamp of the
 * key's records so far in this partition (known here) and `A` the stream time before the partition's records
 * (the watermark and earlier partitions, known only to the state operator). So a record is kept iff
 * `m < end + grace` AND `A < end + grace`: this class applies the first condition record by record (`m` only
 * grows, so a window keeps a prefix of its records) and [[TimeWindowAggregator.addPartial]] the second to the
 * whole partial. The result equals Kafka's record-by-record processing in arrival order.
 */
final class TimeWindowPartials[V, B](definition: TimeWindowDefinition, aggregation: Aggregation[V, B]) {

  /** The largest timestamp of the key's records in this partition (dropped ones included: they advance time). */
  var maxTs: Long = Long.MinValue

  /** Records dropped here, once per record and closed window. */
  var dropped: Long = 0L

  private[this] val partials = new ArrayBuffer[TimeWindowPartials.Partial[B]](2)

  def add(value: V, ts: Long): Unit = {
    if (ts > maxTs) maxTs = ts
    val advance = definition.advanceMs
    var start = definition.firstStart(ts)
    var more = start <= ts
    while (more) {
      if (TimeMath.plus(definition.endOf(start), definition.graceMs) > maxTs) {
        val p = find(start)
        if (p == null) partials += new TimeWindowPartials.Partial(start, aggregation.add(aggregation.initial(), value), ts, 1L)
        else {
          p.buffer = aggregation.add(p.buffer, value)
          if (ts > p.maxTs) p.maxTs = ts
          p.records += 1
        }
      } else dropped += 1
      more = start <= ts - advance
      start += advance
    }
  }

  // Records mostly hit the newest windows, which sit at the end.
  private def find(start: Long): TimeWindowPartials.Partial[B] = {
    var i = partials.length - 1
    while (i >= 0) {
      if (partials(i).start == start) return partials(i)
      i -= 1
    }
    null
  }

  /** The partial aggregates, by window start. */
  def result: IndexedSeq[TimeWindowPartials.Partial[B]] = partials.sortBy(_.start).toIndexedSeq
}

object TimeWindowPartials {
  /** The combined `records` of one window (`start`), their largest timestamp and their buffer. */
  final class Partial[B](val start: Long, var buffer: B, var maxTs: Long, var records: Long)
}
