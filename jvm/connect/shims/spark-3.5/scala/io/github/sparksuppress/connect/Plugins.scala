package io.github.sparksuppress.connect

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.connect.planner.SparkConnectPlanner
import org.apache.spark.sql.connect.plugin.{ExpressionPlugin, RelationPlugin}
import org.sparkproject.connect.protobuf.{Any => ProtoAny}

// Spark 3.5's Connect plugins get the extension as a protobuf Any and answer with a Scala Option (from 4.0 on:
// bytes and a java.util.Optional; shims/spark-4.0-up).

/** The operators on Spark Connect ([[SparkSuppressRelations]]). */
class SparkSuppressRelationPlugin extends RelationPlugin {
  override def transform(relation: ProtoAny, planner: SparkConnectPlanner): Option[LogicalPlan] =
    SparkSuppressRelations.transform(relation, planner)
}

/** `ss.string_fold` on Spark Connect ([[StringFoldExpressions]]). */
class StringFoldExpressionPlugin extends ExpressionPlugin {
  override def transform(relation: ProtoAny, planner: SparkConnectPlanner): Option[Expression] =
    StringFoldExpressions.transform(relation, planner)
}
