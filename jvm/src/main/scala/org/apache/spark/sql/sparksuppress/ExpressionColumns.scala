package org.apache.spark.sql.sparksuppress

import org.apache.spark.sql.Column
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.classic.ExpressionUtils

/**
 * The one place spark-suppress reaches Spark's `private[sql]` API: turning a resolved Catalyst expression back
 * into a Column. The windowed aggregation resolves the user's aggregate columns with Spark's analyzer and must
 * then evaluate their argument expressions (e.g. the `amount * 2` of `sum(amount * 2)`) before the shuffle.
 */
object ExpressionColumns {
  def column(e: Expression): Column = ExpressionUtils.column(e)
}
