package org.apache.spark.sql.sparksuppress

import org.apache.spark.sql.{DataFrame, Dataset, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * A DataFrame of an analysed logical plan, through Spark's `private[sql]` `Dataset.ofRows` (Spark 4 moved it to the
 * classic package). A chain reads the `where`/`select` steps on its input back from the plan and needs the input
 * under them as a DataFrame of its own.
 */
object PlanFrames {
  def of(spark: SparkSession, plan: LogicalPlan): DataFrame = Dataset.ofRows(spark, plan)
}
