package io.github.sparksuppress.core

/**
 * Kafka's `KStreamSlidingWindowAggregate` for one key. Windows are `[start, start + d]` (both inclusive) and exist
 * only where records make them: each record has a left window ending at it and, when later records fall within `d`
 * after it, a right window starting 1 ms after it. A new window starts from a copy of a neighbour's aggregate (the
 * windows before and after a record cover exactly the records it needs), so aggregates follow Kafka's own sequence of
 * copies and additions, which matters for order-sensitive aggregations.
 *
 * A record is dropped (once) when even its latest window is closed (`ts + d < stream time - grace`); each closed
 * window it would have updated counts one more drop. Records earlier than `d` (whose left window would start before
 * 0) share the window `[0, d]`, as in Kafka.
 *
 * Closed windows stay (marked closed) while a later record could still read them: a processed record reads windows
 * starting from `ts - 2d`, and its `ts` is at least `closeTime - d`. Kafka keeps them by store retention; this keeps
 * exactly those that can still be read, so results equal Kafka's with a long retention.
 */
final class SlidingWindowAggregator[V, B](
    val definition: SlidingWindowDefinition,
    mode: EmitMode,
    aggregation: Aggregation[V, B],
    val windows: KeyWindows[B]
) extends WindowedAggregator[V, B](mode, aggregation) {

  require(!windows.sessionOrder)

  private[this] val d = definition.timeDifferenceMs
  private[this] val twoD = TimeMath.plus(d, d)
  private[this] val threeD = TimeMath.plus(twoD, d)

  /** A window's buffer and timestamp as they were before this record changed anything. */
  private final class Snapshot(val buffer: B, val timestamp: Long)

  private def snapshot(e: WindowEntry[B]): Snapshot = new Snapshot(aggregation.copy(e.buffer), e.timestamp)

  def add(value: V, ts: Long, streamTime: Long, sink: WindowSink[B]): Unit = {
    val closeTime = TimeMath.minus(streamTime, definition.graceMs) // a window is open iff end >= this
    if (TimeMath.plus(ts, d) < closeTime) {
      metrics.dropped += 1
      // Every window holding the record is closed; the one it would have created is its left window.
      val start = math.max(0L, ts - d)
      late(start, TimeMath.plus(start, d), value, ts, sink)
    } else if (ts < d) addEarly(value, ts, closeTime, sink)
    else addInOrder(value, ts, closeTime, sink)
  }

  private def firstIndexFrom(start: Long): Int = {
    val i = windows.search(start, 0L)
    if (i >= 0) i else -i - 1
  }

  /**
   * A record at or after `d`, as Kafka processes it over its built-in window stores, which iterate backwards: the
   * windows that can hold it are visited latest start first, each open one updated and forwarded in that order, the
   * record's left window last; the visit stops at the first window that ends before the record (it supplies the left
   * window's seed). Only then are the windows the record needs created: the previous record's right window, the
   * record's left window, the record's right window. The order is what a downstream node sees: an update forwarded
   * early can move a final-results suppress's stream time past a window forwarded later in the same step.
   */
  private def addInOrder(value: V, ts: Long, closeTime: Long, sink: WindowSink[B]): Unit = {
    val from = firstIndexFrom(math.max(0L, ts - twoD))
    var i = firstIndexFrom(ts + 2) - 1 // the last window starting at or before ts + 1
    var right: Snapshot = null // the latest-starting window that holds the record and ends after it, as it was
    var left: WindowEntry[B] = null
    var leftExists = false
    var rightExists = false
    var previous = Long.MinValue // the latest record before ts, when a window reveals it
    var visiting = true
    while (visiting && i >= from) {
      val e = windows(i)
      if (e.start == ts + 1) rightExists = true
      else if (e.end > ts) {
        if (right == null) right = snapshot(e)
        update(e, value, ts, closeTime, sink)
      } else if (e.end == ts) {
        leftExists = true
        val latestBefore = e.timestamp
        update(e, value, ts, closeTime, sink)
        // The left window already holds a record at ts, which created every window this record needs.
        if (latestBefore >= ts) return
        previous = latestBefore
      } else {
        left = e
        previous = e.timestamp
        visiting = false
      }
      i -= 1
    }
    if (previous != Long.MinValue) {
      val previousRight = previous + 1
      if (windows.byStart(previousRight) == null && previousRight + d >= ts) {
        create(previousRight, aggregation.initial(), value, ts, closeTime, sink)
      }
    }
    if (!leftExists) {
      val seed =
        if (previous != Long.MinValue && ts - d <= previous) aggregation.copy(left.buffer) else aggregation.initial()
      create(ts - d, seed, value, ts, closeTime, sink)
    }
    if (!rightExists && right != null && right.timestamp > ts) putRight(ts, right, sink)
  }

  private def addEarly(value: V, ts: Long, closeTime: Long, sink: WindowSink[B]): Unit = {
    val from = firstIndexFrom(0L)
    var rightSource: WindowEntry[B] = null
    var combined: WindowEntry[B] = null
    var i = from
    while (i < windows.size && windows(i).start <= ts) {
      val e = windows(i)
      if (e.start == 0L) combined = e else rightSource = e
      i += 1
    }
    // Without a later window, the shared early window holds exactly the records after ts, if it has any.
    if (rightSource == null && combined != null && combined.timestamp > ts) rightSource = combined
    val right = if (rightSource == null) null else snapshot(rightSource)
    var rightExists = false
    var previous = Long.MinValue
    i = from
    while (i < windows.size && windows(i).start <= ts + 1) {
      val e = windows(i)
      if (e.start == 0L) {
        if (e.timestamp < ts) previous = e.timestamp
      } else if (e.start <= ts) update(e, value, ts, closeTime, sink)
      else rightExists = true
      i += 1
    }
    if (!rightExists && right != null && right.timestamp > ts) putRight(ts, right, sink)
    if (previous != Long.MinValue && windows.byStart(previous + 1) == null) {
      create(previous + 1, aggregation.initial(), value, ts, closeTime, sink)
    }
    if (combined == null) create(0L, aggregation.initial(), value, ts, closeTime, sink)
    else update(combined, value, ts, closeTime, sink)
  }

  /** Adds the record to an existing window, or drops it for that window if the window is closed. */
  private def update(e: WindowEntry[B], value: V, ts: Long, closeTime: Long, sink: WindowSink[B]): Unit =
    if (e.end >= closeTime) {
      e.buffer = aggregation.add(e.buffer, value)
      if (ts > e.timestamp) e.timestamp = ts
      changed = true
      if (emitsUpdates) sink.result(e.start, e.end, e.timestamp, e.buffer)
    } else {
      metrics.dropped += 1
      late(e.start, e.end, value, ts, sink)
    }

  /**
   * A new window from `seed` plus the record (replacing one created earlier for this record, as Kafka's put does).
   */
  private def create(start: Long, seed: B, value: V, ts: Long, closeTime: Long, sink: WindowSink[B]): Unit = {
    val end = TimeMath.plus(start, d)
    if (end >= closeTime) put(new WindowEntry(start, end, ts, aggregation.add(seed, value)), sink)
    else {
      metrics.dropped += 1
      late(start, end, value, ts, sink)
    }
  }

  private def late(start: Long, end: Long, value: V, ts: Long, sink: WindowSink[B]): Unit =
    if (sink.takesLate) sink.late(start, end, ts, aggregation.add(aggregation.initial(), value))

  /** The record's right window: the records after it, copied from the window that held them, without the record. */
  private def putRight(ts: Long, right: Snapshot, sink: WindowSink[B]): Unit =
    put(new WindowEntry(ts + 1, TimeMath.plus(ts + 1, d), right.timestamp, right.buffer), sink)

  private def put(e: WindowEntry[B], sink: WindowSink[B]): Unit = {
    val i = windows.search(e.start, e.end)
    if (i >= 0) windows.removeAt(i)
    windows.insert(e)
    changed = true
    if (emitsUpdates) sink.result(e.start, e.end, e.timestamp, e.buffer)
  }

  /** Closes windows (start order is close order) and forgets closed ones no later record can read. */
  override def closeDue(streamTime: Long, sink: WindowSink[B]): Unit = {
    var i = 0
    while (i < windows.size && closesAt(windows(i)) <= streamTime) {
      val e = windows(i)
      if (!e.closed) {
        e.closed = true
        changed = true
        emitFinal(e, sink)
      }
      i += 1
    }
    while (!windows.isEmpty && windows(0).closed && windows(0).start < forgetBefore(streamTime)) {
      windows.removeAt(0)
      changed = true
    }
  }

  /** Windows starting before this are never read again at `streamTime` (see the class comment). */
  private def forgetBefore(streamTime: Long): Long =
    TimeMath.minus(TimeMath.minus(streamTime, definition.graceMs), threeD)

  override def nextWakeUp: Long = {
    var i = 0
    while (i < windows.size && windows(i).closed) i += 1
    val nextClose = if (i < windows.size) closesAt(windows(i)) else Long.MaxValue
    // The oldest closed window can be forgotten once forgetBefore(st) > start.
    val nextForget = if (!windows.isEmpty && windows(0).closed) {
      TimeMath.plus(TimeMath.plus(TimeMath.plus(windows(0).start, definition.graceMs), threeD), 1L)
    } else Long.MaxValue
    math.min(nextClose, nextForget)
  }
}
