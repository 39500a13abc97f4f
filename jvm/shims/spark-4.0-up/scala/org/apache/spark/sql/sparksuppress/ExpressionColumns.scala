package org.apache.spark.sql.sparksuppress

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.classic
import org.apache.spark.sql.classic.ExpressionUtils

/**
 * The one place spark-suppress reaches Spark's `private[sql]` API: between Columns and Catalyst expressions. The
 * windowed aggregation resolves the user's aggregate columns with Spark's analyzer and must then evaluate their
 * argument expressions (e.g. the `amount * 2` of `sum(amount * 2)`) before the shuffle; and its map side is a
 * Catalyst generator ([[io.github.sparksuppress.spark.WindowAggregateMapSide]]) over the input's columns.
 */
object ExpressionColumns {
  def column(e: Expression): Column = ExpressionUtils.column(e)

  /** A Column's (possibly unresolved) Catalyst expression, for an expression spark-suppress builds around it. */
  def expression(c: Column): Expression = ExpressionUtils.expression(c)

  /**
   * `c` as a tree of Catalyst expressions, for rewriting parts of it: [[expression]] wraps a Column whole, to be
   * converted when the analyzer reaches it, so no rule can look inside before then.
   */
  def expressionTree(df: DataFrame, c: Column): Expression =
    df.sparkSession.asInstanceOf[classic.SparkSession].expression(c)
}
