package org.apache.spark.sql.sparksuppress

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.classic.{Dataset, SparkSession}

/**
 * The Spark Connect plugin's access to Spark's `private[sql]` API: the planner hands it logical plans, and the
 * operators (through WireFacade, the same entry points py4j calls) take DataFrames.
 */
object ConnectPlans {
  def frame(session: SparkSession, plan: LogicalPlan): DataFrame = Dataset.ofRows(session, plan)
}
