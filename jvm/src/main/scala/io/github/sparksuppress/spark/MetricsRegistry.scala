package io.github.sparksuppress.spark

import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.streaming.{StreamingQuery, StreamingQueryListener}
import org.apache.spark.sql.streaming.StreamingQueryListener.{QueryProgressEvent, QueryStartedEvent, QueryTerminatedEvent}

/**
 * Driver-side registry of the operators built in this JVM and their metrics.
 *
 * Each operator's output is observed (`Dataset.observe`) under its observation name, which puts a per-batch
 * emit count into `StreamingQueryProgress.observedMetrics` and lets [[forQuery]] find the operators of a query.
 * Gauges are sampled once per micro-batch, when the progress event arrives, for their averages and maxima.
 */
object MetricsRegistry {

  final class Operator private[MetricsRegistry] (
      val observationName: String,
      val operatorName: String,
      val accumulator: OperatorMetricsAccumulator,
      describe: (OperatorMetricsAccumulator.Snapshot, Operator) => Map[String, Double]) {
    private val samples = new ConcurrentHashMap[String, Array[Double]]() // gauge -> (sum, n, max)

    private[spark] def sampleBatch(): Unit = {
      val snap = accumulator.value
      sampledGauges.foreach { g =>
        val v = currentGauge(snap, g).toDouble
        samples.compute(g, (_, s) => {
          val a = if (s == null) Array(0.0, 0.0, Double.MinValue) else s
          a(0) += v; a(1) += 1; a(2) = math.max(a(2), v)
          a
        })
      }
    }

    /** Gauges are the sum of per-shard values and of per-key deltas. */
    def currentGauge(snap: OperatorMetricsAccumulator.Snapshot, name: String): Long =
      math.max(0L, snap.gauges.getOrElse(name, 0L) + snap.counters.getOrElse(name, 0L))

    def average(name: String): Double = Option(samples.get(name)).map(a => if (a(1) == 0) 0.0 else a(0) / a(1)).getOrElse(0.0)
    def maximum(name: String): Double = Option(samples.get(name)).map(_(2)).getOrElse(0.0)

    @volatile private var sampledGauges: Seq[String] = Seq.empty
    private[spark] def sampling(gauges: Seq[String]): this.type = { sampledGauges = gauges; this }

    def metrics: Map[String, Double] = describe(accumulator.value, this)
  }

  private val operators = new ConcurrentHashMap[String, Operator]()
  private val listenedSessions = ConcurrentHashMap.newKeySet[SparkSession]()

  def register(
      spark: SparkSession,
      kind: String,
      operatorName: String,
      sampledGauges: Seq[String])(describe: (OperatorMetricsAccumulator.Snapshot, Operator) => Map[String, Double]): Operator = {
    val acc = new OperatorMetricsAccumulator
    spark.sparkContext.register(acc, s"spark-suppress $kind $operatorName")
    val observation = observationName(operatorName)
    val op = new Operator(observation, operatorName, acc, describe).sampling(sampledGauges)
    operators.put(observation, op)
    if (listenedSessions.add(spark)) spark.streams.addListener(Listener)
    op
  }

  def observationName(operatorName: String): String = s"spark_suppress:$operatorName"

  /** The operators of `query` (those whose observations its progress reports), by operator name. */
  def forQuery(query: StreamingQuery): Map[String, Map[String, Double]] = {
    val names = query.recentProgress.iterator.flatMap(p => Option(p.observedMetrics).map(_.keySet.asScala).getOrElse(Nil)).toSet
    names.iterator.flatMap(n => Option(operators.get(n))).map(o => o.operatorName -> o.metrics).toMap
  }

  def byName(operatorName: String): Option[Operator] = Option(operators.get(observationName(operatorName)))

  private object Listener extends StreamingQueryListener {
    override def onQueryStarted(event: QueryStartedEvent): Unit = ()
    override def onQueryTerminated(event: QueryTerminatedEvent): Unit = ()
    override def onQueryProgress(event: QueryProgressEvent): Unit = {
      val observed = Option(event.progress.observedMetrics).map(_.keySet.asScala).getOrElse(Nil)
      observed.foreach(n => Option(operators.get(n)).foreach(_.sampleBatch()))
    }
  }
}
