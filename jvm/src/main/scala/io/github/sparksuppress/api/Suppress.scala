package io.github.sparksuppress.api

import java.time.Duration

import org.apache.spark.sql.DataFrame

import io.github.sparksuppress.spark.SuppressPlan
import io.github.sparksuppress.spark.chain.{ChainPlan, ChainStep}

/**
 * The suppress operator as a function on DataFrames: `df.transform(Suppress(Seq("user"), "ts", suppressed))`.
 *
 * The input is a stream of updates (a changelog): key column(s), an event-time column with a watermark, any
 * value columns, and optionally a boolean tombstone column (true = the key was deleted). The output has the same
 * columns, for the rows that leave the buffer; each carries the latest buffered update of its key (and window).
 *
 * @param key       key column name(s)
 * @param timestamp the event-time column (TimestampType)
 * @param window    where windowed input carries its window; required by `untilWindowCloses`
 * @param grace     how long after a window's end it stays open; required by `untilWindowCloses`
 * @param tombstone a boolean column marking deletions
 */
final case class Suppress(
    key: Seq[String],
    timestamp: String,
    suppressed: Suppressed,
    window: Option[WindowColumns] = None,
    grace: Option[Duration] = None,
    tombstone: Option[String] = None)
    extends (DataFrame => DataFrame) {

  def withWindow(window: WindowColumns): Suppress = copy(window = Option(window))
  def withGrace(grace: Duration): Suppress = copy(grace = Option(grace))
  def withTombstone(column: String): Suppress = copy(tombstone = Option(column))

  /** Applied to the output of another operator of this library, it joins that operator's chain (one query). */
  override def apply(df: DataFrame): DataFrame = ChainPlan.apply(df, ChainStep.SuppressStep(this))(SuppressPlan.build(_, this))
}

object Suppress {
  def apply(key: String, timestamp: String, suppressed: Suppressed): Suppress = Suppress(Seq(key), timestamp, suppressed)
}
