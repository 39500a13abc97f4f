package io.github.sparksuppress.connect;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.connect.planner.SparkConnectPlanner;
import org.apache.spark.sql.connect.plugin.ExpressionPlugin;
import org.sparkproject.connect.protobuf.Any;

import scala.Option;

// Spark 3.5's Connect plugins: see SparkSuppressRelationPlugin here (Java for the same reason).

/** {@code ss.string_fold} on Spark Connect ({@link StringFoldExpressions}). */
public class StringFoldExpressionPlugin implements ExpressionPlugin {
  @Override
  public Option<Expression> transform(Any relation, SparkConnectPlanner planner) {
    return StringFoldExpressions.transform(relation, planner);
  }
}
