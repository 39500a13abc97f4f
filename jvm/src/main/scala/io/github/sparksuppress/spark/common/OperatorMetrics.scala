package io.github.sparksuppress.spark.common

import java.util.{HashMap => JHashMap}

import scala.jdk.CollectionConverters._

import org.apache.spark.util.AccumulatorV2

/**
 * What one stateful operator's tasks report to the driver: counters (summed), gauges, maxima, and sums for averages.
 * One accumulator per operator instance.
 *
 * A gauge (e.g. how many records a buffer holds) comes in one of two ways, by how the operator keeps state: an
 * operator with one state entry per shard reports the shard's value (the latest report of a shard wins); one with an
 * entry per key reports how much each key changed it (summed). The gauge's value is the sum of both.
 */
private[sparksuppress] final class OperatorMetricsAccumulator
    extends AccumulatorV2[OperatorMetricsAccumulator.Update, OperatorMetricsAccumulator.Snapshot] {
  import OperatorMetricsAccumulator._

  /** The driver's registry entry for this operator: whatever keeps the plan (and so this) alive keeps it too. */
  @transient @volatile private[common] var owner: AnyRef = _

  private var counters = new JHashMap[String, java.lang.Long]()
  private var gauges = new JHashMap[String, java.lang.Long]() // "name\u0000shard" -> value
  private var gaugeDeltas = new JHashMap[String, java.lang.Long]()
  private var maxima = new JHashMap[String, java.lang.Long]()
  private var sums = new JHashMap[String, Array[Double]]() // name -> (sum, count)

  // Spark registers an accumulator with its task while deserializing it, before the fields of this class are read,
  // and the executor's heartbeat thread may then ask it `isZero` (an exception there stops the heartbeats for good:
  // the driver later takes the executor for lost) or, on a cluster, send it to the driver, whose `value` reads it.
  // So what reads the maps takes a missing one for an empty one; only the task's own thread writes them.
  private def read[V](m: JHashMap[String, V]): java.util.Map[String, V] =
    if (m == null) java.util.Collections.emptyMap[String, V]() else m

  override def isZero: Boolean =
    read(counters).isEmpty && read(gauges).isEmpty && read(gaugeDeltas).isEmpty && read(maxima).isEmpty &&
      read(sums).isEmpty

  override def copy(): OperatorMetricsAccumulator = {
    val c = new OperatorMetricsAccumulator
    c.counters = new JHashMap(read(counters))
    c.gauges = new JHashMap(read(gauges))
    c.gaugeDeltas = new JHashMap(read(gaugeDeltas))
    c.maxima = new JHashMap(read(maxima))
    c.sums = new JHashMap[String, Array[Double]]()
    read(sums).asScala.foreach { case (k, v) => c.sums.put(k, v.clone()) }
    c
  }

  override def reset(): Unit = {
    counters = new JHashMap(); gauges = new JHashMap(); gaugeDeltas = new JHashMap(); maxima = new JHashMap();
    sums = new JHashMap()
  }

  override def add(u: Update): Unit = u match {
    case Count(name, delta) => counters.merge(name, delta, (a, b) => a + b)
    case Gauge(name, shard, value) => gauges.put(name + "\u0000" + shard, value)
    case GaugeDelta(name, delta) => gaugeDeltas.merge(name, delta, (a, b) => a + b)
    case Max(name, value) => maxima.merge(name, value, (a, b) => math.max(a, b))
    case Sample(name, value) =>
      val s = sums.computeIfAbsent(name, _ => Array(0.0, 0.0))
      s(0) += value; s(1) += 1
  }

  def count(name: String, delta: Long): Unit = if (delta != 0) add(Count(name, delta))

  /** A shard's current value of gauge `name`. */
  def gauge(name: String, shard: Int, value: Long): Unit = add(Gauge(name, shard, value))

  /** How much one key changed gauge `name`. */
  def gaugeDelta(name: String, delta: Long): Unit = if (delta != 0) add(GaugeDelta(name, delta))
  def max(name: String, value: Long): Unit = add(Max(name, value))
  def sample(name: String, value: Double): Unit = add(Sample(name, value))

  override def merge(other: AccumulatorV2[Update, Snapshot]): Unit = other match {
    case o: OperatorMetricsAccumulator =>
      read(o.counters).forEach((k, v) => counters.merge(k, v, (a, b) => a + b))
      read(o.gauges).forEach((k, v) => gauges.put(k, v))
      read(o.gaugeDeltas).forEach((k, v) => gaugeDeltas.merge(k, v, (a, b) => a + b))
      read(o.maxima).forEach((k, v) => maxima.merge(k, v, (a, b) => math.max(a, b)))
      read(o.sums).forEach { (k, v) =>
        val s = sums.computeIfAbsent(k, _ => Array(0.0, 0.0))
        s(0) += v(0); s(1) += v(1)
      }
    case _ => throw new UnsupportedOperationException(s"cannot merge ${other.getClass}")
  }

  override def value: Snapshot = {
    val deltas = read(gaugeDeltas)
    val shardTotals = read(gauges).asScala.toSeq.groupBy(_._1.takeWhile(_ != '\u0000')).map { case (n, vs) =>
      n -> vs.map(_._2.longValue).sum
    }
    val gaugeTotals = (shardTotals.keySet ++ deltas.keySet.asScala).map { n =>
      n -> math.max(0L, shardTotals.getOrElse(n, 0L) + Option(deltas.get(n)).map(_.longValue).getOrElse(0L))
    }.toMap
    Snapshot(
      read(counters).asScala.map { case (k, v) => k -> v.longValue }.toMap,
      gaugeTotals,
      read(maxima).asScala.map { case (k, v) => k -> v.longValue }.toMap,
      read(sums).asScala.map { case (k, v) => k -> (if (v(1) == 0) 0.0 else v(0) / v(1)) }.toMap
    )
  }
}

private[sparksuppress] object OperatorMetricsAccumulator {
  sealed trait Update
  final case class Count(name: String, delta: Long) extends Update
  final case class Gauge(name: String, shard: Int, value: Long) extends Update
  final case class GaugeDelta(name: String, delta: Long) extends Update
  final case class Max(name: String, value: Long) extends Update
  final case class Sample(name: String, value: Double) extends Update

  /** Counters, gauges (shards' values plus keys' changes), maxima, and averages of samples. */
  final case class Snapshot(
      counters: Map[String, Long],
      gauges: Map[String, Long],
      maxima: Map[String, Long],
      averages: Map[String, Double]
  ) {
    def gauge(name: String): Long = gauges.getOrElse(name, 0L)
  }
}
