package io.github.sparksuppress.api

import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.sql.{Column, DataFrame}

import io.github.sparksuppress.spark.chain.{ChainDescription, ChainPlan, ChainStep}
import io.github.sparksuppress.spark.window.WindowAggregateRequest

/**
 * Kafka's windowed aggregation with grace periods and emit strategies, as a function on DataFrames:
 * {{{
 *   events.transform(AggregateWindowed(Seq("user"), "ts",
 *     TimeWindows.ofSizeAndGrace(Duration.ofMinutes(5), Duration.ofMinutes(1)),
 *     Seq(count("*").as("n"), sum("amount").as("total")), EmitStrategy.onWindowClose()))
 * }}}
 *
 * The input is a stream of records with key column(s) and an event-time column carrying a watermark. The output has
 * the key columns, a `window` struct (`start`, `end` timestamps, as Spark's `window()` gives), one column per
 * aggregate, the result's timestamp (named as the input's event-time column) and, for session windows emitting
 * updates, a boolean `retraction` column; and, under `withLateRecords(LateRecords.Emit)`, a boolean `late` column
 * (see [[withLateRecords]]).
 *
 * @param aggregations
 *   Spark aggregate columns: `count`, `sum`, `min`, `max`, `avg`, `first`, `last` (aliased or not), or a typed
 *   `Aggregator` as `functions.udaf(aggregator)(columns...)`
 * @param name
 *   names the operator in metrics and errors, and guards its state in the checkpoint
 */
final case class AggregateWindowed(
    key: Seq[String],
    timestamp: String,
    windows: Windows,
    aggregations: Seq[Column],
    emit: EmitStrategy = EmitStrategy.onWindowUpdate(),
    name: Option[String] = None,
    lateRecords: LateRecords = LateRecords.Drop,
    idleTimeout: Option[Duration] = None
) extends (DataFrame => DataFrame) {

  def withEmitStrategy(emit: EmitStrategy): AggregateWindowed = copy(emit = emit)

  def withName(name: String): AggregateWindowed = copy(name = Some(Suppressed.checkName(name)))

  /**
   * `LateRecords.Emit` (beyond Kafka): a record dropped because a window it belongs to has closed also leaves as a
   * row with `late = true`: its key, the window it missed, the aggregates of that record alone and its own timestamp;
   * one row per record and closed window, the records Kafka counts in `dropped-records-total` (a sliding window
   * record that every window has passed by misses its own left window, `[ts - d, ts]`). Other rows have
   * `late = false`. Records are then aggregated record by record (no combining before the shuffle).
   */
  def withLateRecords(lateRecords: LateRecords): AggregateWindowed = copy(lateRecords = lateRecords)

  /**
   * Idle progress (beyond Kafka): once a key's stream time (the watermark, advanced by the key's own records) has not
   * moved for `idleTimeout` of wall-clock time, it runs on with the wall clock, so the last windows close although no
   * record arrives. Not deterministic, and needs a processing-time trigger: see docs/emit.md, "Idle progress".
   */
  def withIdleTimeout(idleTimeout: Duration): AggregateWindowed = {
    Durations.idleTimeout(idleTimeout)
    copy(idleTimeout = Some(idleTimeout))
  }

  /**
   * Applied to the output of another operator of this library, it joins that operator's chain (one query); otherwise
   * it is a chain of one.
   */
  override def apply(df: DataFrame): DataFrame = {
    val step = ChainStep.WindowedAggregateStep(request)
    ChainPlan.apply(df, step)(input => ChainPlan.build(ChainDescription(input, Seq(step))))
  }

  /** The operator in the adapter's terms; every rule that needs no DataFrame is checked here. */
  private[sparksuppress] def request: WindowAggregateRequest = {
    val operatorName = name.getOrElse(s"aggregate-windowed-${AggregateWindowed.unnamed.incrementAndGet()}")
    val operator = s"aggregate_windowed '$operatorName'"
    if (windows == null) {
      throw new IllegalArgumentException(
        s"$operator: windows must be TimeWindows, SlidingWindows or SessionWindows, e.g. " +
          "TimeWindows.ofSizeAndGrace(Duration.ofMinutes(5), Duration.ofMinutes(1))."
      )
    }
    if (emit == null) {
      throw new IllegalArgumentException(
        s"$operator: emit must be EmitStrategy.onWindowClose() or EmitStrategy.onWindowUpdate()."
      )
    }
    if (lateRecords == null) {
      throw new IllegalArgumentException(
        s"$operator: lateRecords must be LateRecords.Drop or LateRecords.Emit, not null."
      )
    }
    WindowAggregateRequest(
      operatorName,
      name,
      key,
      timestamp,
      windows.definition,
      emit.mode,
      aggregations,
      emitLate = lateRecords == LateRecords.Emit,
      idleTimeoutMs = idleTimeout.map(Durations.idleTimeout)
    )
  }
}

object AggregateWindowed {
  private val unnamed = new AtomicInteger()

  def apply(
      key: String,
      timestamp: String,
      windows: Windows,
      aggregations: Seq[Column],
      emit: EmitStrategy
  ): AggregateWindowed =
    AggregateWindowed(Seq(key), timestamp, windows, aggregations, emit)
}
