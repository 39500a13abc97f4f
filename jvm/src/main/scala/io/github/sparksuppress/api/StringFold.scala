package io.github.sparksuppress.api

import org.apache.spark.sql.{Column, Encoder, Encoders}
import org.apache.spark.sql.expressions.Aggregator
import org.apache.spark.sql.functions.udaf

/**
 * Kafka's classic test aggregation as a typed Aggregator: starts from `initial`, appends `separator + value` for
 * every record in arrival order, and joins merged sessions as `left + separator + right`. Its result shows exactly in
 * which order and grouping records were aggregated, which makes it a trace of the operator's behaviour (the
 * conformance vectors use it); it is not a monoid, so it is never pre-combined.
 */
final class StringFold(initial: String, separator: String) extends Aggregator[String, String, String] {
  def zero: String = initial
  def reduce(buffer: String, value: String): String = buffer + separator + value
  def merge(left: String, right: String): String = left + separator + right
  def finish(reduction: String): String = reduction
  def bufferEncoder: Encoder[String] = Encoders.STRING
  def outputEncoder: Encoder[String] = Encoders.STRING
}

object StringFold {

  /** The aggregate column folding `column` (cast to a string) with a [[StringFold]]. */
  def column(column: Column, initial: String, separator: String): Column = {
    if (initial == null || separator == null) {
      throw new IllegalArgumentException(
        "StringFold: initial and separator must not be null; pass strings (\"\" for none)."
      )
    }
    udaf(new StringFold(initial, separator), Encoders.STRING).apply(column.cast("string"))
  }
}
