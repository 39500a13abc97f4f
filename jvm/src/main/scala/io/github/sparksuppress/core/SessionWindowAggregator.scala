package io.github.sparksuppress.core

import scala.collection.mutable.ArrayBuffer

/**
 * Kafka's `KStreamSessionWindowAggregate` for one key. A record at `ts` merges with every session whose end is at
 * least `ts - gap` and whose start is at most `ts + gap` (both inclusive): the merged buffer is
 * `merge(...merge(initial, s1)..., sn)` over those sessions in store order, then the record is added. The record is
 * dropped (and counted) if the merged session is closed (`end < stream time - gap - grace`). Under onWindowUpdate
 * every removed session is retracted (timestamp = its end) before the merged session is emitted (timestamp = merged
 * end); a record equal to an existing single-point session updates it without retraction.
 *
 * Closed sessions leave the state: a later record never merges with one. Kafka behaves so with its default store
 * retention (gap + grace), which hides closed sessions from merges.
 */
final class SessionWindowAggregator[V, B](
    val definition: SessionWindowDefinition,
    mode: EmitMode,
    aggregation: Aggregation[V, B],
    val windows: KeyWindows[B]
) extends WindowedAggregator[V, B](mode, aggregation) {

  require(windows.sessionOrder)

  private[this] val candidates = new ArrayBuffer[WindowEntry[B]](4)

  def add(value: V, ts: Long, streamTime: Long, sink: WindowSink[B]): Unit = {
    val gap = definition.gapMs
    val closeTime = TimeMath.minus(TimeMath.minus(streamTime, gap), definition.graceMs)
    val lowestEnd = TimeMath.minus(ts, gap)
    val highestStart = TimeMath.plus(ts, gap)
    candidates.clear()
    // Sessions of a key never overlap, so in (end, start) order their starts rise too.
    var i = windows.search(Long.MinValue, lowestEnd)
    if (i < 0) i = -i - 1
    while (i < windows.size && windows(i).start <= highestStart) {
      candidates += windows(i)
      i += 1
    }
    var buffer = aggregation.initial()
    var start = ts
    var end = ts
    var c = 0
    while (c < candidates.length) {
      val s = candidates(c)
      buffer = aggregation.merge(buffer, s.buffer)
      if (s.start < start) start = s.start
      if (s.end > end) end = s.end
      c += 1
    }
    if (end < closeTime) {
      metrics.dropped += 1
      // The session the record would have formed with the stored sessions it touches, which closed before it came.
      if (sink.takesLate) sink.late(start, end, ts, aggregation.add(aggregation.initial(), value))
      return
    }
    val absorbs = start != ts || end != ts
    c = 0
    while (c < candidates.length) {
      val s = candidates(c)
      windows.remove(s)
      if (absorbs && emitsUpdates) sink.retraction(s.start, s.end, s.end, s.buffer)
      c += 1
    }
    buffer = aggregation.add(buffer, value)
    windows.insert(new WindowEntry(start, end, end, buffer))
    changed = true
    if (emitsUpdates) sink.result(start, end, end, buffer)
  }
}
