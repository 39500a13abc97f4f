package org.apache.spark.sql.sparksuppress

import org.apache.spark.sql.{DataFrame, Dataset, SparkSession}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

// Spark 4.0 moved Dataset.ofRows into the classic package (shims/spark-4.0-up); on 3.5 it is on sql.Dataset.
object ConnectPlans {
  def frame(session: SparkSession, plan: LogicalPlan): DataFrame = Dataset.ofRows(session, plan)
}
