package io.github.sparksuppress.spark.common

import org.apache.spark.sql.SparkSession

/**
 * Each operator's metrics under Kafka's names, read from what its tasks count: one registration per kind of operator,
 * used by the stand-alone operator and by the same operator as a node of a chain.
 */
private[sparksuppress] object OperatorMetricNames {

  def suppress(spark: SparkSession, name: String): MetricsRegistry.Operator =
    MetricsRegistry.register(spark, "suppress", name, Seq("buffer-count", "buffer-bytes")) { (snap, o) =>
      Map("suppression-emit-total" -> snap.counters.getOrElse("emitted", 0L).toDouble) ++
        o.gaugeMetrics(snap, "suppression-buffer-count", "buffer-count") ++
        o.gaugeMetrics(snap, "suppression-buffer-size", "buffer-bytes")
    }

  def windowedAggregation(spark: SparkSession, name: String): MetricsRegistry.Operator =
    MetricsRegistry.register(spark, "aggregate_windowed", name, Nil) { (snap, _) =>
      def counter(n: String) = snap.counters.getOrElse(n, 0L).toDouble
      def ratio(total: String, n: String) = if (counter(n) == 0) 0.0 else counter(total) / counter(n)
      Map(
        "dropped-records-total" -> counter("dropped"),
        "record-lateness-avg" -> ratio("lateness-total", "lateness-records"),
        "record-lateness-max" -> snap.maxima.get("lateness-max").map(_.toDouble).getOrElse(0.0),
        "window-aggregate-final-emit-total" -> counter("emitted-final"),
        "window-aggregate-final-emit-latency-avg" -> ratio("emit-latency-total", "emitted-final"),
        "window-aggregate-final-emit-latency-max" -> snap.maxima.get("emit-latency-max").map(_.toDouble).getOrElse(0.0)
      )
    }

  /** Kafka's KTable aggregation reports the records it skips (null key or value) among its task's dropped records. */
  def aggregation(spark: SparkSession, name: String): MetricsRegistry.Operator =
    MetricsRegistry.register(spark, "aggregate", name, Nil) { (snap, _) =>
      Map("dropped-records-total" -> snap.counters.getOrElse("dropped", 0L).toDouble)
    }

  def join(spark: SparkSession, name: String): MetricsRegistry.Operator =
    MetricsRegistry.register(spark, "join", name, Seq("grace-buffer-count", "grace-buffer-bytes")) { (snap, o) =>
      def counter(n: String) = snap.counters.getOrElse(n, 0L).toDouble
      Map(
        "join-emit-total" -> counter("emitted"),
        "dropped-records-total" ->
          (counter("dropped-null-key-or-value") + counter("expired-table-writes") + counter("dropped-null-table-key")),
        "dropped-null-key-or-value-total" -> counter("dropped-null-key-or-value"),
        "expired-table-writes-total" -> counter("expired-table-writes"),
        "dropped-null-table-key-total" -> counter("dropped-null-table-key"),
        "late-records-joined-total" -> counter("late-joined")
      ) ++
        o.gaugeMetrics(snap, "grace-buffer-count", "grace-buffer-count") ++
        o.gaugeMetrics(snap, "grace-buffer-size", "grace-buffer-bytes")
    }
}
