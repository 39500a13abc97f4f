package org.apache.spark

import org.apache.spark.sql.SparkSession

/** Test access to Spark's listener bus (package-private in Spark). */
object ListenerBusAccess {

  /** Waits until every event posted so far, streaming query events included, has reached its listeners. */
  def drain(spark: SparkSession): Unit = spark.sparkContext.listenerBus.waitUntilEmpty()
}
