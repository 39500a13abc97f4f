package io.github.sparksuppress.connect

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.connect.planner.SparkConnectPlanner
import org.apache.spark.sql.sparksuppress.ExpressionColumns
import org.sparkproject.connect.protobuf.{Any => ProtoAny, CodedInputStream}

import io.github.sparksuppress.connect.proto.StringFold
import io.github.sparksuppress.wire.WireFacade

/**
 * `ss.string_fold` on Spark Connect, behind the expression plugin each Spark line's shim declares
 * ([[StringFoldExpressionPlugin]]; register it with
 * `spark.connect.extensions.expression.classes=io.github.sparksuppress.connect.StringFoldExpressionPlugin`). The
 * operators need only the relation plugin; this one is for the string-fold aggregate (Kafka's test aggregation).
 */
object StringFoldExpressions {

  def transform(any: ProtoAny, planner: SparkConnectPlanner): Option[Expression] = {
    if (!any.is(classOf[StringFold])) None
    else ConnectSupport.nested("StringFold") {
      val m = ConnectSupport.message(any, "StringFold", StringFold.parseFrom(_: CodedInputStream))
      val column = ConnectSupport.column(planner, m.getColumn, "StringFold.column")
      Some(ExpressionColumns.expression(WireFacade.stringFold(column, m.getInitial, m.getSeparator)))
    }
  }
}
