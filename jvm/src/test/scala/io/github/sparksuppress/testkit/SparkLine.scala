package io.github.sparksuppress.testkit

/**
 * The Spark line the tests run on, for the few tests that pin a line's own behaviour (docs/spark-3.5-differences.md).
 */
object SparkLine {
  val is35: Boolean = org.apache.spark.SPARK_VERSION.startsWith("3.5.")
}
