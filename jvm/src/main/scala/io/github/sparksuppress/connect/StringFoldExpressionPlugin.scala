package io.github.sparksuppress.connect

import java.util.Optional

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.connect.planner.SparkConnectPlanner
import org.apache.spark.sql.connect.plugin.ExpressionPlugin
import org.apache.spark.sql.sparksuppress.ExpressionColumns
import org.sparkproject.connect.protobuf.{Any => ProtoAny}

import io.github.sparksuppress.connect.proto.StringFold
import io.github.sparksuppress.python.PythonFacade

/**
 * `ss.string_fold` on Spark Connect: register with
 * `spark.connect.extensions.expression.classes=io.github.sparksuppress.connect.StringFoldExpressionPlugin`.
 * The operators need only the relation plugin; this one is for the string-fold aggregate (Kafka's test aggregation).
 */
class StringFoldExpressionPlugin extends ExpressionPlugin {

  override def transform(extension: Array[Byte], planner: SparkConnectPlanner): Optional[Expression] = {
    val any = ProtoAny.parseFrom(extension)
    if (!any.is(classOf[StringFold])) Optional.empty()
    else {
      val m = any.unpack(classOf[StringFold])
      val column = ConnectSupport.column(planner, m.getColumn)
      Optional.of(ExpressionColumns.expression(PythonFacade.stringFold(column, m.getInitial, m.getSeparator)))
    }
  }
}
