package io.github.sparksuppress.spark.window

import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction
import org.apache.spark.sql.catalyst.expressions.{Expression, InheritAnalysisRules, RuntimeReplaceableAggregate}
import org.apache.spark.sql.catalyst.expressions.aggregate.{AggregateFunction, Last, MaxBy}

/**
 * `spark_suppress_latest(value[, order])`: the aggregate spark-suppress's aggregations evaluate as Kafka's
 * `reduce((v1, v2) -> v2)`, the latest non-null value to ARRIVE (see [[ArrivalAggregate]]). Both transports spell it
 * as a call by name, which [[LatestArrival.bind]] turns into this node before analysis. Its replacement (`max_by`
 * over `order`, or `last` without one) is only what Spark's analyzer checks the arguments against: Spark has no
 * arrival order across micro-batches to evaluate it by.
 */
private[sparksuppress] final case class LatestArrival(
    value: Expression,
    order: Option[Expression],
    replacement: Expression
) extends AggregateFunction
    with RuntimeReplaceableAggregate
    with InheritAnalysisRules {

  override def prettyName: String = LatestArrival.Name

  override def parameters: Seq[Expression] = value +: order.toSeq

  override protected def withNewChildInternal(newChild: Expression): Expression = copy(replacement = newChild)

  /** The resolved value and order: the replacement holds them, since only it is the analyzer's child. */
  def resolvedArguments: (Expression, Option[Expression]) = replacement match {
    case m: MaxBy => (m.valueExpr, Some(m.orderingExpr))
    case l: Last => (l.child, None)
    case other => throw new IllegalStateException(s"${LatestArrival.Name}: unexpected replacement ${other.sql}")
  }
}

private[sparksuppress] object LatestArrival {
  val Name = "spark_suppress_latest"

  /**
   * `e` with every call of `spark_suppress_latest` (as `Latest.column` / `ss.latest` spell it, by name, on both
   * transports) bound to this aggregate, before Spark's analyzer resolves it. The name is not registered in the
   * session: Spark 4.2 and later keep temporary functions under qualified names only, and outside spark-suppress's
   * aggregations the function has no meaning Spark could give it.
   */
  def bind(e: Expression): Expression = e.transformUp {
    case f: UnresolvedFunction if f.nameParts.map(_.toLowerCase(java.util.Locale.ROOT)) == Seq(Name) =>
      build(f.arguments)
  }

  private def build(arguments: Seq[Expression]): Expression = arguments match {
    // Wrapped as the analyzer wraps the aggregate functions it looks up by name.
    case Seq(value) => LatestArrival(value, None, Last(value, ignoreNulls = true)).toAggregateExpression()
    case Seq(value, order) => LatestArrival(value, Some(order), MaxBy(value, order)).toAggregateExpression()
    case other =>
      throw new IllegalArgumentException(
        s"$Name takes a value and optionally an order column (latest(value) or latest(value, order_by)); got " +
          s"${other.length} arguments."
      )
  }
}
