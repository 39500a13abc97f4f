package io.github.sparksuppress.core.chain

import scala.collection.mutable.ArrayBuffer

import io.github.sparksuppress.core._

/**
 * Kafka's windowed aggregation node (`groupByKey().windowedBy(w).aggregate(...)`) inside a chain: one
 * [[WindowedAggregator]] per key, one stream time for all of them.
 *
 * Per record: null keys are dropped (and, for sliding windows, null values) before stream time moves, as Kafka's
 * processors do; the key's windows closed at the new stream time close first, the record is applied (updates are
 * forwarded at once under onWindowUpdate), then every key's windows that closed are closed too. Final results
 * (onWindowClose) leave in Kafka's window-store order, by key then window, because the downstream node's stream time
 * depends on that order.
 *
 * @param valueOf
 *   what the aggregation reads from a record
 * @param render
 *   the value forwarded for (key, window, timestamp, buffer, retraction); it must not share the (mutable) buffer.
 *   Retractions are forwarded as tombstones carrying the rendered value.
 * @param emitLate
 *   beyond Kafka: each record dropped for a closed window also leaves as a late record (rendered as an update of that
 *   window that aggregates the record alone, at its own timestamp), where Kafka counts the drop
 * @param measuresLateness
 *   the node measures each record's lateness against its stream time (off where it was measured before the node)
 */
final class WindowedAggregateNode[K, V, B](
    val definition: WindowDefinition,
    val mode: EmitMode,
    val aggregation: Aggregation[V, B],
    valueOf: ChainRecord[K] => V,
    render: (K, WindowBounds, Long, B, Boolean) => AnyRef,
    emitLate: Boolean = false,
    measuresLateness: Boolean = true
)(implicit keys: KeyOps[K])
    extends ChainNode[K] {

  /** The keys' aggregators, in key order (Kafka's fetch order); keys without windows leave. */
  val aggregators = new java.util.TreeMap[K, WindowedAggregator[V, B]](keys)
  val metrics = new WindowAggregationMetrics
  private[this] var time = Long.MinValue
  // Lower bound on every key's next wake-up, so that most records need no sweep over all keys.
  private[this] var earliestDue = Long.MaxValue

  private[this] val dropsNullValues = definition.isInstanceOf[SlidingWindowDefinition]

  def streamTime: Long = time

  /** Restores the node's clock (state read back). */
  def restore(streamTime: Long): Unit = { time = streamTime; earliestDue = Long.MinValue }

  /** Restores one key's windows (state read back). */
  def restoreKey(key: K, windows: KeyWindows[B]): Unit = {
    aggregators.put(key, WindowedAggregator(definition, mode, aggregation, windows))
    earliestDue = Long.MinValue
  }

  def process(record: ChainRecord[K], out: ChainOutput[K]): Unit = {
    if (record.key == null || (dropsNullValues && record.isTombstone)) { metrics.dropped += 1; return }
    if (measuresLateness) metrics.lateness(time, record.timestamp)
    if (record.timestamp > time) time = record.timestamp
    val a = aggregatorOf(record.key)
    // Final results of this key wait for the key-ordered sweep below, as Kafka emits them only after the record.
    val held = new Held(record.key)
    val dropped = a.metrics.dropped
    val emitted = a.metrics.emittedFinal
    a.closeDue(time, held)
    a.add(valueOf(record), record.timestamp, time, new Forward(record.key, out))
    metrics.dropped += a.metrics.dropped - dropped
    metrics.emittedFinal += a.metrics.emittedFinal - emitted
    if (a.nextWakeUp < earliestDue) earliestDue = a.nextWakeUp
    sweep(out, held)
    if (a.windows.isEmpty) aggregators.remove(record.key)
  }

  /** Moves stream time to `to` (never back) and closes what is due then, also windows merged in at a time before. */
  def advance(to: Long, out: ChainOutput[K]): Unit =
    if (to >= time) {
      time = to
      sweep(out, null)
    }

  /**
   * Merges a partial aggregate of `records` records of `key`, combined before they reached the node (time windows
   * only: `TimeWindowAggregator.addPartial`), as if they were added at stream time `streamTime`. Nothing is
   * forwarded: windows that close leave at the next [[advance]].
   */
  def addPartial(
      key: K,
      start: Long,
      slice: Boolean,
      partial: B,
      maxTs: Long,
      records: Long,
      streamTime: Long
  ): Unit = {
    val a = aggregatorOf(key).asInstanceOf[TimeWindowAggregator[V, B]]
    val dropped = a.metrics.dropped
    a.addPartial(start, slice, partial, maxTs, records, streamTime)
    metrics.dropped += a.metrics.dropped - dropped
    earliestDue = Long.MinValue
    if (a.windows.isEmpty) aggregators.remove(key)
  }

  private def aggregatorOf(key: K): WindowedAggregator[V, B] = {
    var a = aggregators.get(key)
    if (a == null) {
      a = WindowedAggregator(definition, mode, aggregation, WindowedAggregator.emptyWindows[B](definition))
      aggregators.put(key, a)
    }
    a
  }

  def nextDueStreamTime: Long = {
    if (earliestDue == Long.MinValue) recomputeEarliest()
    earliestDue
  }

  private def recomputeEarliest(): Unit = {
    var m = Long.MaxValue
    val it = aggregators.values().iterator()
    while (it.hasNext) { val w = it.next().nextWakeUp; if (w < m) m = w }
    earliestDue = m
  }

  /** Closes every key's due windows, in key order; `held` carries the current key's results already closed. */
  private def sweep(out: ChainOutput[K], held: Held): Unit = {
    if (held != null && held.records.nonEmpty) earliestDue = Long.MinValue
    if (earliestDue != Long.MinValue && earliestDue > time) return
    var m = Long.MaxValue
    val it = aggregators.entrySet().iterator()
    while (it.hasNext) {
      val e = it.next()
      val forward = new Forward(e.getKey, out)
      if (held != null && keys.same(e.getKey, held.key)) held.records.foreach(r => out.forward(r))
      val a = e.getValue
      if (a.nextWakeUp <= time) {
        val before = a.metrics.emittedFinal
        a.closeDue(time, forward)
        metrics.emittedFinal += a.metrics.emittedFinal - before
      }
      if (a.windows.isEmpty) it.remove()
      else if (a.nextWakeUp < m) m = a.nextWakeUp
    }
    earliestDue = m
  }

  private def bounds(start: Long, end: Long): WindowBounds = WindowBounds(start, end)

  private def record(
      key: K,
      start: Long,
      end: Long,
      timestamp: Long,
      buffer: B,
      retraction: Boolean
  ): ChainRecord[K] = {
    val w = bounds(start, end)
    ChainRecord(key, w, render(key, w, timestamp, buffer, retraction), timestamp, tombstone = retraction)
  }

  private final class Forward(key: K, out: ChainOutput[K]) extends WindowSink[B] {
    def result(start: Long, end: Long, timestamp: Long, buffer: B): Unit =
      out.forward(record(key, start, end, timestamp, buffer, retraction = false))
    def retraction(start: Long, end: Long, timestamp: Long, buffer: B): Unit =
      out.forward(record(key, start, end, timestamp, buffer, retraction = true))
    override def takesLate: Boolean = emitLate
    override def late(start: Long, end: Long, timestamp: Long, buffer: B): Unit =
      out.late(record(key, start, end, timestamp, buffer, retraction = false))
  }

  private final class Held(val key: K) extends WindowSink[B] {
    val records = new ArrayBuffer[ChainRecord[K]](0)
    def result(start: Long, end: Long, timestamp: Long, buffer: B): Unit =
      records += record(key, start, end, timestamp, buffer, retraction = false)
    def retraction(start: Long, end: Long, timestamp: Long, buffer: B): Unit =
      records += record(key, start, end, timestamp, buffer, retraction = true)
  }
}
