package io.github.sparksuppress.connect;

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.connect.plugin.RelationPlugin;
import org.sparkproject.connect.protobuf.Any;

import scala.Option;

// Spark 3.5's Connect plugins get the extension as a protobuf Any and answer with a Scala Option (from 4.0 on: bytes
// and a java.util.Optional; shims/spark-4.0-up). In Java because 3.5's jar relocates protobuf in its bytecode but
// not in its Scala signatures, which name com.google.protobuf.Any: scalac cannot override transform.

/** The operators on Spark Connect ({@link SparkSuppressRelations}). */
public class SparkSuppressRelationPlugin implements RelationPlugin {
  @Override
  public Option<LogicalPlan> transform(Any relation, SparkConnectPlanner planner) {
    return SparkSuppressRelations.transform(relation, planner);
  }
}
