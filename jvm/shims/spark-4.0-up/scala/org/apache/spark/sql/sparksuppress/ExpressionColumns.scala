package org.apache.spark.sql.sparksuppress

import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.classic.ExpressionUtils

/**
 * The one place spark-suppress reaches Spark's `private[sql]` API: between Columns and Catalyst expressions.
 * The windowed aggregation resolves the user's aggregate columns with Spark's analyzer and must then evaluate
 * their argument expressions (e.g. the `amount * 2` of `sum(amount * 2)`) before the shuffle; and its map side
 * is a Catalyst generator ([[io.github.sparksuppress.spark.WindowAggregateMapSide]]) over the input's columns.
 */
object ExpressionColumns {
  def column(e: Expression): Column = ExpressionUtils.column(e)

  /** A Column's (possibly unresolved) Catalyst expression, for an expression spark-suppress builds around it. */
  def expression(c: Column): Expression = ExpressionUtils.expression(c)
}
