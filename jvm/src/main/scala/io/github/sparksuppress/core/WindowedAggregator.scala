package io.github.sparksuppress.core

/**
 * Kafka's windowed aggregation for ONE key, driven by an explicit stream time: records go in with [[add]], windows
 * close with [[closeDue]]. The caller owns stream time (Kafka: the largest timestamp seen; the Spark adapter: the
 * watermark, advanced by the key's records in arrival order) and calls, per record, `closeDue(st)` then
 * `add(value, ts, st)` with `st` already including the record, so that windows closed by that time neither take the
 * record nor stay visible to it.
 *
 * Emission: under [[EmitMode.OnWindowUpdate]] every change goes to the sink as it happens; under
 * [[EmitMode.OnWindowClose]] each window goes to the sink once, from [[closeDue]]. Either way a closed window leaves
 * [[windows]] (sliding windows stay a while, marked closed; see [[SlidingWindowAggregator]]).
 */
abstract class WindowedAggregator[V, B](val mode: EmitMode, val aggregation: Aggregation[V, B]) {
  def definition: WindowDefinition

  val windows: KeyWindows[B]
  val metrics = new WindowAggregationMetrics

  /** True once anything about [[windows]] changed since construction (the caller then stores them again). */
  var changed: Boolean = false

  protected final def emitsUpdates: Boolean = mode == EmitMode.OnWindowUpdate

  /** Applies one record with timestamp `ts`; `streamTime` already includes it. */
  def add(value: V, ts: Long, streamTime: Long, sink: WindowSink[B]): Unit

  /**
   * Closes every window closed at `streamTime`, in Kafka's emission order, emitting final results under
   * onWindowClose. Time and session windows close in store order, so closing is removing a prefix.
   */
  def closeDue(streamTime: Long, sink: WindowSink[B]): Unit = {
    while (!windows.isEmpty && closesAt(windows(0)) <= streamTime) {
      val e = windows.removeAt(0)
      changed = true
      emitFinal(e, sink)
    }
  }

  protected final def emitFinal(e: WindowEntry[B], sink: WindowSink[B]): Unit =
    if (mode == EmitMode.OnWindowClose) {
      metrics.emittedFinal += 1
      sink.result(e.start, e.end, e.timestamp, e.buffer)
    }

  protected final def closesAt(e: WindowEntry[B]): Long = definition.closesAt(e.start, e.end)

  /** The earliest stream time at which this key needs [[closeDue]] again; `Long.MaxValue` for never. */
  def nextWakeUp: Long = if (windows.isEmpty) Long.MaxValue else closesAt(windows(0))
}

object WindowedAggregator {

  /** An aggregator for `definition` over `windows` (restored from state, or empty). */
  def apply[V, B](
      definition: WindowDefinition,
      mode: EmitMode,
      aggregation: Aggregation[V, B],
      windows: KeyWindows[B]
  ): WindowedAggregator[V, B] =
    definition match {
      case t: TimeWindowDefinition => new TimeWindowAggregator(t, mode, aggregation, windows)
      case s: SlidingWindowDefinition => new SlidingWindowAggregator(s, mode, aggregation, windows)
      case s: SessionWindowDefinition => new SessionWindowAggregator(s, mode, aggregation, windows)
    }

  /** The empty window collection for `definition`, in the order its aggregator keeps. */
  def emptyWindows[B](definition: WindowDefinition): KeyWindows[B] =
    new KeyWindows[B](sessionOrder = definition.isInstanceOf[SessionWindowDefinition])
}
