package io.github.sparksuppress.api

import java.time.Duration
import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.sql.DataFrame

import io.github.sparksuppress.core.SuppressionSpec
import io.github.sparksuppress.spark.suppress.{SuppressRequest, SuppressRules, WindowColumnNames}
import io.github.sparksuppress.spark.chain.{ChainDescription, ChainPlan, ChainStep, ChainSuppressRequest}

/**
 * The suppress operator as a function on DataFrames: `df.transform(Suppress(Seq("user"), "ts", suppressed))`.
 *
 * The input is a stream of updates (a changelog): key column(s), an event-time column with a watermark, any value
 * columns, and optionally a boolean tombstone column (true = the key was deleted). The output has the same columns,
 * for the rows that leave the buffer; each carries the latest buffered update of its key (and window).
 *
 * @param key
 *   key column name(s)
 * @param timestamp
 *   the event-time column (TimestampType)
 * @param window
 *   where windowed input carries its window; required by `untilWindowCloses`
 * @param grace
 *   how long after a window's end it stays open; required by `untilWindowCloses`
 * @param tombstone
 *   a boolean column marking deletions
 * @param lateRecords
 *   `LateRecords.Emit` (untilWindowCloses only; beyond Kafka): an update for a window that has already closed (window
 *   end + grace <= stream time, the update itself included) leaves at once with `late = true` in an added boolean
 *   column, instead of leaving as Kafka lets it out: unflagged, like a second final result. Other rows have
 *   `late = false`.
 * @param idleTimeout
 *   see [[withIdleTimeout]]
 */
final case class Suppress(
    key: Seq[String],
    timestamp: String,
    suppressed: Suppressed,
    window: Option[WindowColumns] = None,
    grace: Option[Duration] = None,
    tombstone: Option[String] = None,
    lateRecords: LateRecords = LateRecords.Drop,
    idleTimeout: Option[Duration] = None
) extends (DataFrame => DataFrame) {

  def withWindow(window: WindowColumns): Suppress = copy(window = Option(window))
  def withGrace(grace: Duration): Suppress = copy(grace = Option(grace))
  def withTombstone(column: String): Suppress = copy(tombstone = Option(column))
  def withLateRecords(lateRecords: LateRecords): Suppress = copy(lateRecords = lateRecords)

  /**
   * Idle progress (beyond Kafka; event-time clock only): once a group's stream time (the watermark, advanced by the
   * group's own records) has not moved for `idleTimeout` of wall-clock time, it runs on with the wall clock, so
   * buffered records leave although no record arrives. Not deterministic, and needs a processing-time trigger: see
   * docs/suppress.md, "Idle progress".
   */
  def withIdleTimeout(idleTimeout: Duration): Suppress = {
    Durations.idleTimeout(idleTimeout)
    copy(idleTimeout = Some(idleTimeout))
  }

  /**
   * Applied to the output of another operator of this library, it joins that operator's chain (one query); otherwise
   * it is a chain of one, which must find window and grace in its own arguments.
   */
  override def apply(df: DataFrame): DataFrame = {
    val step = chainRequest
    ChainPlan.apply(df, ChainStep.SuppressStep(step)) { input =>
      val alone = step.copy(request = standalone(step))
      ChainPlan.build(ChainDescription(input, Seq(ChainStep.SuppressStep(alone))))
    }
  }

  /**
   * The operator as a chain step: every rule that needs no DataFrame is decided and checked here, except that
   * untilWindowCloses may lack window and grace, which a windowed aggregation before it in the chain provides.
   */
  private[sparksuppress] def chainRequest: ChainSuppressRequest = {
    if (suppressed == null) throw new IllegalArgumentException("suppress: suppressed must not be null.")
    val name = suppressed.name.getOrElse(s"suppress-${Suppress.unnamed.incrementAndGet()}")
    if (lateRecords == null) {
      throw new IllegalArgumentException(
        s"suppress '$name': lateRecords must be LateRecords.Drop or LateRecords.Emit, not null."
      )
    }
    val windowNames = window.map {
      case WindowColumns.Struct(c) => WindowColumnNames.Struct(c)
      case WindowColumns.StartEnd(a, b) => WindowColumnNames.StartEnd(a, b)
    }
    val buffer = suppressed.bufferConfig
    val emitLate = lateRecords == LateRecords.Emit
    val idleMs = idleTimeout.map(Durations.idleTimeout)
    def request(spec: SuppressionSpec, clock: SuppressionClock) =
      SuppressRequest(
        spec,
        suppressed.name,
        clock,
        buffer.sizeModel,
        key,
        timestamp,
        windowNames,
        tombstone,
        sharded = buffer.isBounded,
        spillToDisk = buffer.spillsToDisk,
        emitLate = emitLate,
        idleTimeoutMs = idleMs
      )
    suppressed match {
      case t: Suppressed.TimeLimit =>
        if (idleTimeout.isDefined && t.clock == SuppressionClock.ProcessingTime) {
          val option = Spelling.choose(s"idleTimeout = ${idleTimeout.get}", s"idle_timeout=${idleTimeout.get}")
          throw new IllegalArgumentException(
            s"suppress '$name': $option has no use with a wall-clock time limit " +
              s"(${Spelling.choose("SuppressionClock.ProcessingTime", "clock=\"processing\"")}), " +
              "whose buffer empties by " +
              s"the wall clock already when input stops. Drop the ${Spelling.choose("idleTimeout", "idle_timeout")} " +
              "argument, or measure the time limit in event time."
          )
        }
        if (grace.isDefined) {
          throw new IllegalArgumentException(
            s"suppress '$name': grace applies to untilWindowCloses only; " +
              "untilTimeLimit waits timeToWaitForMoreEvents " +
              s"(${t.timeToWaitForMoreEvents}) after each key's buffer time. Drop the grace argument."
          )
        }
        ChainSuppressRequest(request(t.spec(name), t.clock), untilWindowCloses = false, graceMs = None)
      case w: Suppressed.WindowCloses =>
        val g = grace.map(Durations.millis("grace", _))
        ChainSuppressRequest(
          request(w.spec(name, g.getOrElse(0L)), SuppressionClock.EventTime),
          untilWindowCloses = true,
          graceMs = g
        )
    }
  }

  /** The operator on its own, in the adapter's terms. */
  private[sparksuppress] def request: SuppressRequest = standalone(chainRequest)

  /** A chain step as a stand-alone operator, which must find window and grace in its own arguments. */
  private def standalone(step: ChainSuppressRequest): SuppressRequest = {
    val operator = s"suppress '${step.name}'"
    if (step.untilWindowCloses) {
      if (step.window.isEmpty) throw SuppressRules.notWindowed(operator)
      if (step.graceMs.isEmpty) throw SuppressRules.noGrace(operator)
    } else if (step.emitLate) {
      val option = Spelling.choose("lateRecords = LateRecords.Emit", "late=\"emit\"")
      val argument = Spelling.choose("lateRecords", "late")
      throw new IllegalArgumentException(
        s"$operator: $option applies to untilWindowCloses only: untilTimeLimit has no window that closes, so no " +
          s"update is late. Drop the $argument argument."
      )
    }
    step.request
  }
}

object Suppress {
  private val unnamed = new AtomicInteger()

  def apply(key: String, timestamp: String, suppressed: Suppressed): Suppress =
    Suppress(Seq(key), timestamp, suppressed)
}
