package org.apache.spark.sql.sparksuppress

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.catalyst.expressions.Expression

// Spark 4.0 split Column from Catalyst (a Column holds a ColumnNode; classic.ExpressionUtils converts); on 3.5 a
// Column wraps its Expression directly. What spark-suppress does with it: shims/spark-4.0-up.
object ExpressionColumns {
  def column(e: Expression): Column = new Column(e)

  def expression(c: Column): Expression = c.expr

  /** `c` as a tree of Catalyst expressions, for rewriting parts of it (on 3.5 a Column is one already). */
  def expressionTree(df: DataFrame, c: Column): Expression = c.expr
}
