package io.github.sparksuppress.spark

import java.util.{HashMap => JHashMap}

import scala.jdk.CollectionConverters._

import org.apache.spark.util.AccumulatorV2

/**
 * What one stateful operator's tasks report to the driver: counters (summed), gauges per state shard or
 * partition (the latest value wins), maxima, and sums for averages. One accumulator per operator instance.
 */
final class OperatorMetricsAccumulator extends AccumulatorV2[OperatorMetricsAccumulator.Update, OperatorMetricsAccumulator.Snapshot] {
  import OperatorMetricsAccumulator._

  private var counters = new JHashMap[String, java.lang.Long]()
  private var gauges = new JHashMap[String, java.lang.Long]() // "name\u0000shard" -> value
  private var maxima = new JHashMap[String, java.lang.Long]()
  private var sums = new JHashMap[String, Array[Double]]() // name -> (sum, count)

  override def isZero: Boolean = counters.isEmpty && gauges.isEmpty && maxima.isEmpty && sums.isEmpty

  override def copy(): OperatorMetricsAccumulator = {
    val c = new OperatorMetricsAccumulator
    c.counters = new JHashMap(counters)
    c.gauges = new JHashMap(gauges)
    c.maxima = new JHashMap(maxima)
    c.sums = new JHashMap[String, Array[Double]]()
    sums.asScala.foreach { case (k, v) => c.sums.put(k, v.clone()) }
    c
  }

  override def reset(): Unit = {
    counters = new JHashMap(); gauges = new JHashMap(); maxima = new JHashMap(); sums = new JHashMap()
  }

  override def add(u: Update): Unit = u match {
    case Count(name, delta) => counters.merge(name, delta, (a, b) => a + b)
    case Gauge(name, shard, value) => gauges.put(s"$name\u0000$shard", value)
    case Max(name, value) => maxima.merge(name, value, (a, b) => math.max(a, b))
    case Sample(name, value) =>
      val s = sums.computeIfAbsent(name, _ => Array(0.0, 0.0))
      s(0) += value; s(1) += 1
  }

  def count(name: String, delta: Long): Unit = if (delta != 0) add(Count(name, delta))
  def gauge(name: String, shard: Int, value: Long): Unit = add(Gauge(name, shard, value))
  def max(name: String, value: Long): Unit = add(Max(name, value))
  def sample(name: String, value: Double): Unit = add(Sample(name, value))

  override def merge(other: AccumulatorV2[Update, Snapshot]): Unit = other match {
    case o: OperatorMetricsAccumulator =>
      o.counters.forEach((k, v) => counters.merge(k, v, (a, b) => a + b))
      o.gauges.forEach((k, v) => gauges.put(k, v))
      o.maxima.forEach((k, v) => maxima.merge(k, v, (a, b) => math.max(a, b)))
      o.sums.forEach { (k, v) =>
        val s = sums.computeIfAbsent(k, _ => Array(0.0, 0.0))
        s(0) += v(0); s(1) += v(1)
      }
    case _ => throw new UnsupportedOperationException(s"cannot merge ${other.getClass}")
  }

  override def value: Snapshot = {
    val gaugeTotals = gauges.asScala.toSeq.groupBy(_._1.takeWhile(_ != '\u0000')).map { case (n, vs) => n -> vs.map(_._2.longValue).sum }
    Snapshot(
      counters.asScala.map { case (k, v) => k -> v.longValue }.toMap,
      gaugeTotals,
      maxima.asScala.map { case (k, v) => k -> v.longValue }.toMap,
      sums.asScala.map { case (k, v) => k -> (if (v(1) == 0) 0.0 else v(0) / v(1)) }.toMap)
  }
}

object OperatorMetricsAccumulator {
  sealed trait Update
  final case class Count(name: String, delta: Long) extends Update
  final case class Gauge(name: String, shard: Int, value: Long) extends Update
  final case class Max(name: String, value: Long) extends Update
  final case class Sample(name: String, value: Double) extends Update

  /** Counters, gauges summed over shards, maxima, and averages of samples. */
  final case class Snapshot(
      counters: Map[String, Long],
      gauges: Map[String, Long],
      maxima: Map[String, Long],
      averages: Map[String, Double])
}
