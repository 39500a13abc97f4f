package io.github.sparksuppress.core

/**
 * Kafka's `KStreamWindowAggregate` for tumbling and hopping windows, for one key. A record updates every window
 * containing it, in start order; for each window already closed (`end + grace <= stream time`) it is dropped
 * and counted instead. The aggregate's timestamp is the first record's for a new window, else the larger of
 * the record's and the stored one.
 */
final class TimeWindowAggregator[V, B](
    val definition: TimeWindowDefinition,
    mode: EmitMode,
    aggregation: Aggregation[V, B],
    val windows: KeyWindows[B])
    extends WindowedAggregator[V, B](mode, aggregation) {

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
   * Applies a partial aggregate of `records` records that fell into the window starting at `start` (combined
   * before the shuffle; their largest timestamp is `maxTs`). Equivalent to adding them one by one when the
   * aggregation is a monoid whose `merge` combines partial buffers: all of them are dropped if the window is
   * closed at `streamTime`, else merged into it.
   */
  def addPartial(start: Long, partial: B, maxTs: Long, records: Long, streamTime: Long): Unit = {
    val end = definition.endOf(start)
    if (end > TimeMath.minus(streamTime, definition.graceMs)) {
      val e = windows.byStart(start)
      if (e == null) windows.insert(new WindowEntry(start, end, maxTs, partial))
      else {
        e.buffer = aggregation.merge(e.buffer, partial)
        if (maxTs > e.timestamp) e.timestamp = maxTs
      }
      changed = true
    } else metrics.dropped += records
  }
}
