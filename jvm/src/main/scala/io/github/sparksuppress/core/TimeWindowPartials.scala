package io.github.sparksuppress.core

import scala.collection.mutable.ArrayBuffer

/**
 * One key's records of one input partition, combined before the shuffle, so that the state operator receives a few
 * partial aggregates per key and partition instead of every record.
 *
 * Kafka drops a record for a window when `end + grace <= stream time`, stream time including the record. Over one
 * key's records in arrival order that stream time is `max(A, m)`, where `m` is the largest timestamp of the key's
 * records so far in this partition (known here) and `A` the stream time before the partition's records (the watermark
 * and earlier partitions, known only to the state operator). So a record is kept iff `m < end + grace` AND
 * `A < end + grace`: this class applies the first condition record by record (`m` only grows, so a window keeps a
 * prefix of its records) and [[TimeWindowAggregator.addPartial]] the second to the whole partial. The result equals
 * Kafka's record-by-record processing in arrival order.
 *
 * Hopping windows whose advance divides their size are cut into slices of one advance: every window containing one
 * instant of a slice contains all of it, so a record updates the one partial of its slice rather than the partials of
 * its `size / advance` windows, and the state operator spreads each slice over its windows (the slicing of Flink's
 * and Scotty's window aggregation). A record goes to its slice only while all its windows are open at `m`; one that
 * some window already refuses is combined per window, as for windows that cannot be sliced.
 */
final class TimeWindowPartials[V, B](definition: TimeWindowDefinition, aggregation: Aggregation[V, B]) {
  import TimeWindowPartials._

  /** The largest timestamp of the key's records in this partition (dropped ones included: they advance time). */
  var maxTs: Long = Long.MinValue

  /** Records dropped here, once per record and closed window. */
  var dropped: Long = 0L

  private[this] val sliced = slices(definition)
  private[this] val partials = new ArrayBuffer[Partial[B]](4)

  def add(value: V, ts: Long): Unit = {
    if (ts > maxTs) maxTs = ts
    val advance = definition.advanceMs
    var start = definition.firstStart(ts)
    // The earliest window containing the record closes first: if it is open, all are.
    if (sliced && open(start)) {
      combine(ts - ts % advance, slice = true, value, ts)
      return
    }
    var more = start <= ts
    while (more) {
      if (open(start)) combine(start, slice = false, value, ts)
      else dropped += 1
      more = start <= ts - advance
      start += advance
    }
  }

  /** Whether the window starting at `start` still takes records at this partition's stream time `maxTs`. */
  private def open(start: Long): Boolean = TimeMath.plus(definition.endOf(start), definition.graceMs) > maxTs

  private def combine(start: Long, slice: Boolean, value: V, ts: Long): Unit = {
    val p = find(start, slice)
    if (p == null) partials += new Partial(start, slice, aggregation.add(aggregation.initial(), value), ts, 1L)
    else {
      p.buffer = aggregation.add(p.buffer, value)
      if (ts > p.maxTs) p.maxTs = ts
      p.records += 1
    }
  }

  // Records mostly hit the newest partials, which sit at the end.
  private def find(start: Long, slice: Boolean): Partial[B] = {
    var i = partials.length - 1
    while (i >= 0) {
      val p = partials(i)
      if (p.start == start && p.slice == slice) return p
      i -= 1
    }
    null
  }

  /** The partial aggregates, by start (slices and windows sharing a start in either order). */
  def result: scala.collection.IndexedSeq[Partial[B]] = {
    val sorted = partials.toArray[Partial[B]]
    java.util.Arrays.sort(sorted, ByStart.asInstanceOf[java.util.Comparator[Partial[B]]])
    wrapRefArray(sorted) // no copy, on Scala 2.12 as on 2.13
  }
}

object TimeWindowPartials {

  /**
   * The combined `records` of one window (`start`), or of one slice `[start, start + advance)` of every window
   * containing it, their largest timestamp and their buffer.
   */
  final class Partial[B](val start: Long, val slice: Boolean, var buffer: B, var maxTs: Long, var records: Long)

  /** Whether records are combined per slice: hopping windows whose advance divides their size. */
  def slices(d: TimeWindowDefinition): Boolean = d.advanceMs < d.sizeMs && d.sizeMs % d.advanceMs == 0

  private val ByStart: java.util.Comparator[Partial[Any]] = (a, b) => java.lang.Long.compare(a.start, b.start)
}
