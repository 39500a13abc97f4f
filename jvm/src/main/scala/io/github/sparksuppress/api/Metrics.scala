package io.github.sparksuppress.api

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.streaming.StreamingQuery

import io.github.sparksuppress.spark.common.MetricsRegistry

/** Kafka's metrics of this library's operators, read from the driver. */
object Metrics {

  /**
   * The metrics of the operators in `query`, by operator name (e.g. `suppression-emit-total`). A stopped query keeps
   * the values it had when it terminated.
   */
  def forQuery(query: StreamingQuery): Map[String, Map[String, Double]] = MetricsRegistry.forQuery(query)

  /**
   * The metrics of the operators whose observations a query's progress reports name (the keys of
   * `StreamingQueryProgress.observedMetrics` starting with `spark_suppress:`), for callers without the query object,
   * such as Spark Connect clients. Only operators built by `session` answer: a name of this library's that is not one
   * of them (another session's, or a guess) is an `IllegalArgumentException`, so that sessions sharing a Spark
   * Connect server cannot read each other's metrics.
   */
  def forObservations(session: SparkSession, observationNames: Seq[String]): Map[String, Map[String, Double]] =
    MetricsRegistry.forObservations(session, observationNames)
}
