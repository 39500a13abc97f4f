package io.github.sparksuppress.api

import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.sql.{Column, DataFrame}

import io.github.sparksuppress.spark.chain.{ChainDescription, ChainPlan, ChainStep, KeyAggregateRequest}

/**
 * Kafka's non-windowed aggregation (`groupByKey().count()/reduce()/aggregate()`), a KTable, as a function on
 * DataFrames:
 * {{{
 *   events.transform(Aggregate(Seq("user"), "ts", Seq(count("*").as("n"), sum("amount").as("total"))))
 * }}}
 *
 * Every input row with a key updates its key's aggregate and emits it at once: one update row per input row (the
 * changelog of the table), with the key columns, one column per aggregate and the update's timestamp (named as the
 * input's event-time column): the larger of the row's and the aggregate's previous timestamp. Follow it with
 * [[Suppress]] (`untilTimeLimit`) in the same query to rate-limit the updates.
 *
 * @param aggregations
 *   Spark aggregate columns: `count`, `sum`, `min`, `max`, `avg`, `first`, `last`
 * @param name
 *   names the operator in errors
 */
final case class Aggregate(key: Seq[String], timestamp: String, aggregations: Seq[Column], name: Option[String] = None)
    extends (DataFrame => DataFrame) {

  def withName(name: String): Aggregate = copy(name = Some(Suppressed.checkName(name)))

  /** Runs as a chain of one step; applied to the output of another operator of this library, it joins its chain. */
  override def apply(df: DataFrame): DataFrame = {
    val step = ChainStep.KeyAggregateStep(request)
    ChainPlan.apply(df, step)(input => ChainPlan.build(ChainDescription(input, Seq(step))))
  }

  /** The operator in the adapter's terms. */
  private[sparksuppress] def request: KeyAggregateRequest =
    KeyAggregateRequest(
      name.getOrElse(s"aggregate-${Aggregate.unnamed.incrementAndGet()}"),
      name,
      key,
      timestamp,
      aggregations
    )
}

object Aggregate {
  private val unnamed = new AtomicInteger()

  def apply(key: String, timestamp: String, aggregations: Seq[Column]): Aggregate =
    Aggregate(Seq(key), timestamp, aggregations)
}
