package io.github.sparksuppress.api

import org.apache.spark.sql.Column
import org.apache.spark.sql.functions.call_function

import io.github.sparksuppress.spark.window.LatestArrival

/**
 * Kafka's `reduce((v1, v2) -> v2)` as an aggregate column of [[AggregateWindowed]] and [[Aggregate]]: the latest
 * non-null `value` to ARRIVE. Spark's `last` keeps the value of the latest event time instead, which differs from
 * Kafka's for out-of-order records. Arrival order: a later micro-batch arrives after an earlier one, whatever its
 * event times; within one micro-batch, the record with the greatest `orderBy` (e.g. the Kafka `offset` column)
 * arrived last, and without `orderBy` (or on ties) the order in which the key's records reach the operator, which is
 * a source partition's order.
 *
 * {{{
 *   AggregateWindowed(..., aggregations = Seq(Latest.column(col("price")).as("price")))
 * }}}
 */
object Latest {

  /** The latest non-null `value` by arrival; within a micro-batch, in the order records reach the operator. */
  def column(value: Column): Column = {
    require(value != null, "Latest.column: value must be a column, e.g. col(\"price\")")
    call_function(LatestArrival.Name, value)
  }

  /** The latest non-null `value` by arrival; within a micro-batch, the one with the greatest `orderBy`. */
  def column(value: Column, orderBy: Column): Column = {
    require(value != null, "Latest.column: value must be a column, e.g. col(\"price\")")
    require(
      orderBy != null,
      "Latest.column: orderBy must be a column (e.g. col(\"offset\")); omit it for arrival order"
    )
    call_function(LatestArrival.Name, value, orderBy)
  }
}
