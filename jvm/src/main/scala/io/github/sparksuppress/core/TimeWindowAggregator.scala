package io.github.sparksuppress.core

/**
 * Kafka's `KStreamWindowAggregate` for tumbling and hopping windows, for one key. A record updates every window
 * containing it, in start order; for each window already closed (`end + grace <= stream time`) it is dropped and
 * counted instead. The aggregate's timestamp is the first record's for a new window, else the larger of the record's
 * and the stored one.
 */
final class TimeWindowAggregator[V, B](
    val definition: TimeWindowDefinition,
    mode: EmitMode,
    aggregation: Aggregation[V, B],
    val windows: KeyWindows[B]
) extends WindowedAggregator[V, B](mode, aggregation) {

  require(!windows.sessionOrder)

  def add(value: V, ts: Long, streamTime: Long, sink: WindowSink[B]): Unit = {
    val openAfter = TimeMath.minus(streamTime, definition.graceMs) // a window is open iff end > this
    val advance = definition.advanceMs
    var start = definition.firstStart(ts)
    var more = start <= ts
    while (more) {
      val end = definition.endOf(start)
      if (end > openAfter) {
        var e = windows.byStart(start)
        if (e == null) {
          e = new WindowEntry(start, end, ts, aggregation.add(aggregation.initial(), value))
          windows.insert(e)
        } else {
          e.buffer = aggregation.add(e.buffer, value)
          if (ts > e.timestamp) e.timestamp = ts
        }
        changed = true
        if (emitsUpdates) sink.result(start, end, e.timestamp, e.buffer)
      } else {
        metrics.dropped += 1
        if (sink.takesLate) sink.late(start, end, ts, aggregation.add(aggregation.initial(), value))
      }
      more = start <= ts - advance
      start += advance
    }
  }

  /**
   * Applies a partial aggregate of `records` records combined before the shuffle (their largest timestamp is
   * `maxTs`): of the window starting at `start`, or with `slice`, of the slice `[start, start + advance)`, which
   * every window containing it takes whole ([[TimeWindowPartials]]). Equivalent to adding the records one by one when
   * the aggregation is a monoid whose `merge` combines partial buffers: a window closed at `streamTime` drops all of
   * them, an open one merges them.
   */
  def addPartial(start: Long, slice: Boolean, partial: B, maxTs: Long, records: Long, streamTime: Long): Unit =
    if (!slice) mergeInto(start, partial, maxTs, records, streamTime, shared = false)
    else {
      val advance = definition.advanceMs
      var w = definition.firstStart(start)
      while (w <= start) {
        // Every window but the last gets its own copy of a buffer it is the first to hold.
        mergeInto(w, partial, maxTs, records, streamTime, shared = w < start)
        w += advance
      }
    }

  private def mergeInto(
      start: Long,
      partial: B,
      maxTs: Long,
      records: Long,
      streamTime: Long,
      shared: Boolean
  ): Unit = {
    val end = definition.endOf(start)
    if (end > TimeMath.minus(streamTime, definition.graceMs)) {
      val e = windows.byStart(start)
      if (e == null)
        windows.insert(new WindowEntry(start, end, maxTs, if (shared) aggregation.copy(partial) else partial))
      else {
        e.buffer = aggregation.merge(e.buffer, partial)
        if (maxTs > e.timestamp) e.timestamp = maxTs
      }
      changed = true
    } else metrics.dropped += records
  }
}
