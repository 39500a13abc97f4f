package io.github.sparksuppress.connect

import java.util.Optional

import scala.jdk.OptionConverters._

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.connect.planner.SparkConnectPlanner
import org.apache.spark.sql.connect.plugin.{ExpressionPlugin, RelationPlugin}
import org.sparkproject.connect.protobuf.{Any => ProtoAny}

// From Spark 4.0 on, Connect plugins get the extension as bytes and answer with a java.util.Optional (Spark 3.5:
// a protobuf Any and a Scala Option; shims/spark-3.5).

/** The operators on Spark Connect ([[SparkSuppressRelations]]). */
class SparkSuppressRelationPlugin extends RelationPlugin {
  override def transform(extension: Array[Byte], planner: SparkConnectPlanner): Optional[LogicalPlan] =
    SparkSuppressRelations.transform(ProtoAny.parseFrom(extension), planner).toJava
}

/** `ss.string_fold` on Spark Connect ([[StringFoldExpressions]]). */
class StringFoldExpressionPlugin extends ExpressionPlugin {
  override def transform(extension: Array[Byte], planner: SparkConnectPlanner): Optional[Expression] =
    StringFoldExpressions.transform(ProtoAny.parseFrom(extension), planner).toJava
}
