package io.github.sparksuppress.spark.common

import java.util.concurrent.ConcurrentHashMap

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

  // Only the task's own thread writes these maps, but the executor's heartbeat thread reads them meanwhile: it asks
  // `isZero`, then either serializes this very accumulator for the driver (a cluster) or hands it to the driver, whose
  // `value` reads it (local mode). Concurrent maps can be iterated and serialized while they change (a HashMap
  // serialized while a name is added writes a stream the driver cannot read); a sum and its count are replaced as a
  // new pair, never changed in place, so a reader sees them together. Spark also registers an accumulator with its
  // task while deserializing it, before this class's fields are read: an exception in `isZero` then would stop the
  // heartbeats for good (the driver later takes the executor for lost), so what reads a map takes a missing one for
  // an empty one.
  private var counters = new ConcurrentHashMap[String, java.lang.Long]()
  private var gauges = new ConcurrentHashMap[String, java.lang.Long]() // "name\u0000shard" -> value
  private var gaugeDeltas = new ConcurrentHashMap[String, java.lang.Long]()
  private var maxima = new ConcurrentHashMap[String, java.lang.Long]()
  private var sums = new ConcurrentHashMap[String, Array[Double]]() // name -> (sum, count)

  private def read[V](m: ConcurrentHashMap[String, V]): java.util.Map[String, V] =
    if (m == null) java.util.Collections.emptyMap[String, V]() else m

  override def isZero: Boolean =
    read(counters).isEmpty && read(gauges).isEmpty && read(gaugeDeltas).isEmpty && read(maxima).isEmpty &&
      read(sums).isEmpty

  override def copy(): OperatorMetricsAccumulator = {
    val c = new OperatorMetricsAccumulator
    c.counters = new ConcurrentHashMap(read(counters))
    c.gauges = new ConcurrentHashMap(read(gauges))
    c.gaugeDeltas = new ConcurrentHashMap(read(gaugeDeltas))
    c.maxima = new ConcurrentHashMap(read(maxima))
    c.sums = new ConcurrentHashMap(read(sums))
    c
  }

  override def reset(): Unit = {
    counters = new ConcurrentHashMap(); gauges = new ConcurrentHashMap(); gaugeDeltas = new ConcurrentHashMap()
    maxima = new ConcurrentHashMap(); sums = new ConcurrentHashMap()
  }

  override def add(u: Update): Unit = u match {
    case Count(name, delta) => count(name, delta)
    case Gauge(name, shard, value) => gauge(name, shard, value)
    case GaugeDelta(name, delta) => gaugeDelta(name, delta)
    case Max(name, value) => max(name, value)
    case Sample(name, value) => sample(name, value)
  }

  // The operators call these once or more per key and micro-batch, so they write the maps without an Update between.
  def count(name: String, delta: Long): Unit = if (delta != 0) counters.merge(name, delta, sumLongs)

  /** A shard's current value of gauge `name`. */
  def gauge(name: String, shard: Int, value: Long): Unit = gauges.put(name + "\u0000" + shard, value)

  /** How much one key changed gauge `name`. */
  def gaugeDelta(name: String, delta: Long): Unit = if (delta != 0) gaugeDeltas.merge(name, delta, sumLongs)
  def max(name: String, value: Long): Unit = maxima.merge(name, value, maxLongs)
  def sample(name: String, value: Double): Unit = sums.merge(name, Array(value, 1.0), addPairs)

  override def merge(other: AccumulatorV2[Update, Snapshot]): Unit = other match {
    case o: OperatorMetricsAccumulator =>
      read(o.counters).forEach((k, v) => counters.merge(k, v, sumLongs))
      read(o.gauges).forEach((k, v) => gauges.put(k, v))
      read(o.gaugeDeltas).forEach((k, v) => gaugeDeltas.merge(k, v, sumLongs))
      read(o.maxima).forEach((k, v) => maxima.merge(k, v, maxLongs))
      read(o.sums).forEach((k, v) => sums.merge(k, v, addPairs))
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

  private type Combine[V] = java.util.function.BiFunction[V, V, V]
  private val sumLongs: Combine[java.lang.Long] = (a, b) => a + b
  private val maxLongs: Combine[java.lang.Long] = (a, b) => math.max(a, b)

  /** Two (sum, count) pairs added into a new one. */
  private val addPairs: Combine[Array[Double]] = (a, b) => Array(a(0) + b(0), a(1) + b(1))

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
