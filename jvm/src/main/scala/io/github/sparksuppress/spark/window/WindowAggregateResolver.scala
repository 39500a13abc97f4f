package io.github.sparksuppress.spark.window

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.{AnalysisException, Column, DataFrame}
import org.apache.spark.sql.catalyst.encoders.ExpressionEncoder
import org.apache.spark.sql.catalyst.expressions.{Alias, EvalMode, Expression, Literal}
import org.apache.spark.sql.catalyst.expressions.aggregate._
import org.apache.spark.sql.catalyst.plans.logical.Aggregate
import org.apache.spark.sql.execution.aggregate.ScalaAggregator
import org.apache.spark.sql.expressions.Aggregator
import org.apache.spark.sql.sparksuppress.ExpressionColumns
import org.apache.spark.sql.types._
import io.github.sparksuppress.shims.SumEvalMode
import io.github.sparksuppress.spark.common._

/**
 * Turns the user's aggregate columns into [[AggregateColumn]]s. Spark's analyzer resolves them against the input
 * (`input.agg(columns)`), so names, argument types, implicit casts and result types are exactly Spark's; each must be
 * one aggregate function call, optionally aliased. Their argument expressions become the aggregate inputs, evaluated
 * before the shuffle.
 */
private[spark] object WindowAggregateResolver {

  final case class Resolved(aggregates: Array[AggregateColumn], inputColumns: Seq[Column], inputSchema: StructType)

  val Supported: String =
    "count, sum, min, max, avg (mean), first and last (without DISTINCT or FILTER), latest (spark-suppress's " +
      "arrival-order reduce), or, from Scala and Java, a typed Aggregator passed as " +
      "functions.udaf(aggregator)(columns...)"

  def resolve(df: DataFrame, aggregations: Seq[Column], operator: String): Resolved = {
    if (aggregations == null || aggregations.isEmpty || aggregations.contains(null)) {
      throw new IllegalArgumentException(
        s"""$operator: aggregations must list at least one aggregate column, e.g. count("*"); """ +
          s"supported: $Supported."
      )
    }
    val bound =
      aggregations.map(c => ExpressionColumns.column(LatestArrival.bind(ExpressionColumns.expressionTree(df, c))))
    val analyzed =
      try df.agg(bound.head, bound.tail: _*).queryExecution.analyzed
      catch {
        case e: AnalysisException =>
          throw new IllegalArgumentException(
            s"$operator: the aggregations cannot be resolved against the input (columns " +
              s"${df.columns.mkString("['", "', '", "']")}). Each aggregation is one aggregate function call over " +
              s"""those columns, such as sum("amount"); supported: $Supported. Spark's analysis: """ +
              e.getMessage,
            e
          )
      }
    val named = analyzed match {
      case a: Aggregate if a.groupingExpressions.isEmpty => a.aggregateExpressions
      case other =>
        throw new IllegalArgumentException(
          s"$operator: aggregations must be aggregate function calls; Spark planned them as ${other.nodeName}. " +
            s"Supported: $Supported."
        )
    }
    val inputs = new ArrayBuffer[Expression]()
    def input(e: Expression): Int = { inputs += e; inputs.length - 1 }

    val aggregates = named.map { n =>
      val name = n.name
      def unsupported(what: String): Nothing = throw new IllegalArgumentException(
        s"$operator: aggregation '$name' ($what) is not supported; supported: $Supported."
      )
      val call = n match {
        case Alias(child, _) => child
        case other => unsupported(other.sql)
      }
      call match {
        case AggregateExpression(_, _, true, _, _) => unsupported("DISTINCT aggregates")
        case AggregateExpression(_, _, _, Some(_), _) => unsupported("FILTER clauses")
        case AggregateExpression(fn, _, _, None, _) => fn match {
            case c: Count =>
              // count(*) is count(1): constant non-null arguments count every row.
              val checked = c.children.filterNot(e => e.foldable && e.isInstanceOf[Literal] && e.eval() != null)
              CountAggregate(name, checked.map(input).toArray)
            case s: Sum =>
              requireNumeric(s.child.dataType, name, "sum", operator)
              SumAggregate(name, input(s.child), s.child.dataType, s.dataType, overflow(SumEvalMode.of(s)))
            case a: Average =>
              requireNumeric(a.child.dataType, name, "avg", operator)
              AverageAggregate(name, input(a.child), a.child.dataType, a.dataType, overflow(a.evalMode))
            case m: Min => extreme(name, m.child, isMax = false, operator, input)
            case m: Max => extreme(name, m.child, isMax = true, operator, input)
            case f: First => positional(name, f.child, isLast = false, f.ignoreNulls, input)
            case l: Last => positional(name, l.child, isLast = true, l.ignoreNulls, input)
            case latest: LatestArrival => arrival(name, latest, operator, input)
            case t: ScalaAggregator[_, _, _] =>
              val positions = t.children.map(input).toArray
              TypedAggregateColumn(
                name,
                positions,
                StructType(t.children.zipWithIndex.map { case (e, i) => StructField(s"a$i", e.dataType, e.nullable) }),
                t.agg.asInstanceOf[Aggregator[Any, Any, Any]],
                t.inputEncoder.asInstanceOf[ExpressionEncoder[Any]],
                t.bufferEncoder.asInstanceOf[ExpressionEncoder[Any]],
                t.dataType
              )
            case other => unsupported(other.prettyName)
          }
        case other => unsupported(s"${other.sql}: not a single aggregate function call")
      }
    }.toArray

    val schema = StructType(inputs.zipWithIndex.map { case (e, i) =>
      StructField(s"in$i", e.dataType, nullable = true)
    }.toSeq)
    val columns = inputs.zipWithIndex.map { case (e, i) =>
      ExpressionColumns.column(e).as(s"__spark_suppress_in$i")
    }.toSeq
    Resolved(aggregates, columns, schema)
  }

  private def overflow(mode: EvalMode.Value): OverflowMode = mode match {
    case EvalMode.ANSI => OverflowMode.Fail
    case EvalMode.TRY => OverflowMode.Null
    case _ => OverflowMode.Wrap
  }

  private def requireNumeric(t: DataType, name: String, fn: String, operator: String): Unit = t match {
    case ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType | _: DecimalType =>
    case other =>
      throw new IllegalArgumentException(
        s"$operator: aggregation '$name' is $fn over ${other.simpleString}; $fn supports numeric and decimal inputs " +
          "here. Cast the argument to a number."
      )
  }

  private def extreme(
      name: String,
      child: Expression,
      isMax: Boolean,
      operator: String,
      input: Expression => Int
  ): AggregateColumn = {
    if (ValueOrdering.forType(child.dataType).isEmpty) {
      throw new IllegalArgumentException(
        s"$operator: aggregation '$name' is ${if (isMax) "max" else "min"} over ${child.dataType.simpleString}; " +
          s"min and max support ${ValueOrdering.supportedTypes}."
      )
    }
    ExtremeAggregate(name, input(child), child.dataType, isMax)
  }

  private def arrival(
      name: String,
      latest: LatestArrival,
      operator: String,
      input: Expression => Int
  ): AggregateColumn = {
    val (value, order) = latest.resolvedArguments
    RowCodec.requireSupported(value.dataType, name)
    order.foreach { o =>
      if (ValueOrdering.forType(o.dataType).isEmpty) {
        throw new IllegalArgumentException(
          s"$operator: aggregation '$name' is latest ordered by ${o.dataType.simpleString}; the order column must be " +
            s"one of ${ValueOrdering.supportedTypes} (e.g. a Kafka offset)."
        )
      }
      RowCodec.requireSupported(o.dataType, name)
    }
    val v = input(value)
    ArrivalAggregate(name, v, value.dataType, order.map(o => (input(o), o.dataType)))
  }

  private def positional(
      name: String,
      child: Expression,
      isLast: Boolean,
      ignoreNulls: Boolean,
      input: Expression => Int
  ): AggregateColumn = {
    RowCodec.requireSupported(child.dataType, name)
    PositionalAggregate(name, input(child), child.dataType, isLast, ignoreNulls)
  }
}
