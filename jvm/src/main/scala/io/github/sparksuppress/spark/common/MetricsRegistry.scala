package io.github.sparksuppress.spark.common

import java.lang.ref.WeakReference
import java.util.UUID
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.streaming.{StreamingQuery, StreamingQueryListener}
import org.apache.spark.sql.streaming.StreamingQueryListener.{
  QueryProgressEvent,
  QueryStartedEvent,
  QueryTerminatedEvent
}

/**
 * Driver-side registry of the operators built in this JVM and their metrics, by query.
 *
 * Each operator instance's output is observed (`Dataset.observe`) under a name of its own, which puts a per-batch
 * emit count into `StreamingQueryProgress.observedMetrics` and so tells which query runs it: two queries with
 * operators of the same name never share an entry. When a query terminates, its operators leave the registry (for
 * `retired`, where a restart of the same DataFrame finds them) and their last values are kept for the most recent
 * [[KeptTerminated]] queries, so the registry stays bounded however many queries a driver runs. An operator that no
 * query has run yet is held only as long as its plan is (weakly, through its accumulator), so DataFrames built and
 * never started leave no trace. Gauges are sampled once per micro-batch, when the progress event arrives, for the
 * averages and maxima of operators whose tasks do not sample them.
 */
private[sparksuppress] object MetricsRegistry {

  /** How many terminated queries keep their operators' last values. */
  val KeptTerminated = 64

  /** A gauge as Kafka reports it: current value, average and maximum. */
  final case class GaugeStats(current: Double, average: Double, maximum: Double)

  final class Operator private[MetricsRegistry] (
      val observationName: String,
      val operatorName: String,
      private[MetricsRegistry] val session: Long,
      val accumulator: OperatorMetricsAccumulator,
      describe: (OperatorMetricsAccumulator.Snapshot, Operator) => Map[String, Double]
  ) {
    private val samples = new ConcurrentHashMap[String, Array[Double]]() // gauge -> (sum, n, max)

    private[MetricsRegistry] def sampleBatch(): Unit = {
      val snap = accumulator.value
      sampledGauges.foreach { g =>
        val v = snap.gauge(g).toDouble
        samples.compute(
          g,
          (_, s) => {
            val a = if (s == null) Array(0.0, 0.0, Double.MinValue) else s
            a(0) += v; a(1) += 1; a(2) = math.max(a(2), v)
            a
          }
        )
      }
    }

    /**
     * A gauge's current value, average and maximum. Operators whose tasks sample the gauge as Kafka does (at every
     * put and eviction) have task-side averages and maxima; the others are sampled once per micro-batch.
     */
    def gauge(snap: OperatorMetricsAccumulator.Snapshot, name: String): GaugeStats = {
      val batch = Option(samples.get(name))
      GaugeStats(
        snap.gauge(name).toDouble,
        snap.averages.getOrElse(name, batch.map(a => if (a(1) == 0) 0.0 else a(0) / a(1)).getOrElse(0.0)),
        snap.maxima.get(name).map(_.toDouble).getOrElse(batch.map(_(2)).getOrElse(0.0))
      )
    }

    /** Kafka's three metrics of a gauge: `prefix-current`, `prefix-avg` and `prefix-max`. */
    def gaugeMetrics(snap: OperatorMetricsAccumulator.Snapshot, prefix: String, name: String): Map[String, Double] = {
      val g = gauge(snap, name)
      Map(s"$prefix-current" -> g.current, s"$prefix-avg" -> g.average, s"$prefix-max" -> g.maximum)
    }

    @volatile private var sampledGauges: Seq[String] = Seq.empty
    private[MetricsRegistry] def sampling(gauges: Seq[String]): this.type = { sampledGauges = gauges; this }

    def metrics: Map[String, Double] = describe(accumulator.value, this)
  }

  private val instances = new AtomicLong()

  /** Operators not yet seen terminated, by observation name; the plan that runs one keeps it alive. */
  private val operators = new ConcurrentHashMap[String, WeakReference[Operator]]()

  /**
   * Operators of recently terminated queries, by observation name, the most recent [[KeptTerminated]] * 4 only: a
   * query restarted from the same DataFrame (a new run) reports the same names and finds its operators here again.
   * Weak, as `operators`. Guarded by `terminated`.
   */
  private val retired = new java.util.LinkedHashMap[String, WeakReference[Operator]]()

  /** The observation names each running query (by run id) has reported. */
  private val observedBy = new ConcurrentHashMap[UUID, java.util.Set[String]]()

  /** The last values of recently terminated queries, oldest first. */
  private val terminated = new java.util.LinkedHashMap[UUID, Map[String, Map[String, Double]]]()

  /**
   * The same values by observation name, with the session whose operator it was, for callers that hold no query
   * object (Spark Connect clients).
   */
  private val terminatedObservations = new java.util.LinkedHashMap[String, (Long, (String, Map[String, Double]))]()

  /**
   * A number per session that built operators: what a terminated operator remembers of its session without keeping
   * the session alive. Keyed weakly (and by identity: sessions do not override equals).
   */
  private val sessionKeys =
    java.util.Collections.synchronizedMap(new java.util.WeakHashMap[SparkSession, java.lang.Long]())
  private val sessionCount = new AtomicLong()

  private def sessionKey(spark: SparkSession): Long =
    sessionKeys.computeIfAbsent(spark, _ => java.lang.Long.valueOf(sessionCount.incrementAndGet()))

  /** Observation names of this library's operators start with this; a query may observe other names of its own. */
  val ObservationPrefix = "spark_suppress:"

  def register(
      spark: SparkSession,
      kind: String,
      operatorName: String,
      sampledGauges: Seq[String]
  )(describe: (OperatorMetricsAccumulator.Snapshot, Operator) => Map[String, Double]): Operator = {
    val acc = new OperatorMetricsAccumulator
    spark.sparkContext.register(acc, s"spark-suppress $kind $operatorName")
    val observation = s"$ObservationPrefix$operatorName#${instances.incrementAndGet()}"
    val op = new Operator(observation, operatorName, sessionKey(spark), acc, describe).sampling(sampledGauges)
    acc.owner = op
    operators.values.removeIf(_.get == null)
    operators.put(observation, new WeakReference(op))
    listen(spark)
    op
  }

  /**
   * Puts the registry's listener on the session's query manager once. Spark's own list of the session's listeners is
   * the record of that, so the registry holds no session: a set of sessions here kept every session that ever built
   * an operator alive for the JVM's lifetime (a Spark Connect server makes one per client session, and Spark 3.5 to
   * 4.3 offer no hook on a session's end to release it from). The listener leaves with its session.
   */
  private def listen(spark: SparkSession): Unit = ListenerLock.synchronized {
    if (!spark.streams.listListeners().contains(Listener)) spark.streams.addListener(Listener)
  }

  /**
   * Two operators built at once on one session must not both add the listener (each batch would be sampled twice).
   */
  private object ListenerLock

  /** The operators of `query`, by operator name: live values, or the last ones once it has terminated. */
  def forQuery(query: StreamingQuery): Map[String, Map[String, Double]] = {
    val kept = terminated.synchronized(Option(terminated.get(query.runId)))
    kept.getOrElse {
      val names = query.recentProgress.iterator
        .flatMap(p => Option(p.observedMetrics).map(_.keySet.asScala).getOrElse(Nil)).toSet
      names.iterator.flatMap(live).map(o => o.operatorName -> o.metrics).toMap
    }
  }

  /**
   * The operators observed under `observationNames` (as a query's progress reports them), by operator name: live
   * values, or the last ones of a recently terminated query, for operators built by `session` only.
   *
   * A Spark Connect server is shared by many users' sessions and names are easy to guess (a name and a counter), so a
   * name of this library's that is not an operator of the asking session is refused, whether it belongs to another
   * session, was dropped with an old terminated query or never existed: the error is the same, so that it tells
   * nothing about other sessions. Names without the prefix are other observations of the query and are skipped.
   */
  def forObservations(session: SparkSession, observationNames: Seq[String]): Map[String, Map[String, Double]] = {
    val asking = sessionKey(session)
    val ours = observationNames.distinct.filter(_.startsWith(ObservationPrefix))
    val found = ours.map { n =>
      n -> live(n).filter(_.session == asking).map(o => o.operatorName -> o.metrics).orElse(
        terminated.synchronized(Option(terminatedObservations.get(n))).collect { case (`asking`, values) => values }
      )
    }
    val refused = found.collect { case (n, None) => n }
    if (refused.nonEmpty) {
      throw new IllegalArgumentException(
        s"metrics: ${shown(refused)} ${if (refused.size == 1) "is" else "are"} not " +
          "the observation of an operator of this session's streaming queries. A Spark Connect server answers " +
          "ss.metrics only for the queries of the session that asks (it is shared by many users' sessions), and " +
          s"keeps a terminated query's values only while it is among the $KeptTerminated most recent. Call " +
          "ss.metrics(query) with a query started by this session."
      )
    }
    found.flatMap(_._2).toMap
  }

  /** The refused names, as the client sent them but cut short: the error goes back to the client and into the log. */
  private def shown(names: Seq[String]): String = {
    def cut(n: String) = if (n.length <= 80) s"'$n'" else s"'${n.take(80)}…'"
    names.take(3).map(cut).mkString(", ") + (if (names.size > 3) s" and ${names.size - 3} more" else "")
  }

  /** How many operators and terminated queries the registry holds (it must stay bounded). */
  private[sparksuppress] def size: (Int, Int) = (operators.size, terminated.synchronized(terminated.size))

  private def live(observation: String): Option[Operator] =
    Option(operators.get(observation)).orElse(terminated.synchronized(Option(retired.get(observation)))).flatMap(r =>
      Option(r.get)
    )

  /**
   * This library's operators among a progress report's observations; a restarted query's come back from `retired`.
   */
  private def observations(progressNames: Iterable[String]): Iterable[String] = progressNames.filter { n =>
    operators.containsKey(n) || terminated.synchronized {
      Option(retired.remove(n)).filter(_.get != null).exists { r => operators.put(n, r); true }
    }
  }

  private object Listener extends StreamingQueryListener {
    override def onQueryStarted(event: QueryStartedEvent): Unit = ()

    override def onQueryProgress(event: QueryProgressEvent): Unit = {
      val observed = observations(Option(event.progress.observedMetrics).map(_.keySet.asScala).getOrElse(Nil))
      if (observed.nonEmpty) {
        observedBy.computeIfAbsent(
          event.progress.runId,
          _ => ConcurrentHashMap.newKeySet[String]()
        ).addAll(observed.asJavaCollection)
        observed.foreach(n => live(n).foreach(_.sampleBatch()))
      }
    }

    override def onQueryTerminated(event: QueryTerminatedEvent): Unit = {
      val names = Option(observedBy.remove(event.runId)).map(_.asScala.toSeq).getOrElse(Nil)
      val last = names.flatMap(n => live(n).map(o => n -> (o.session, (o.operatorName, o.metrics))))
      names.filterNot(stillObserved).foreach { n =>
        Option(operators.remove(n)).foreach { r =>
          terminated.synchronized {
            retired.put(n, r)
            keepNewest(retired, KeptTerminated * 4)
          }
        }
      }
      if (last.nonEmpty) terminated.synchronized {
        terminated.put(event.runId, last.map(_._2._2).toMap)
        last.foreach { case (n, values) => terminatedObservations.put(n, values) }
        keepNewest(terminated, KeptTerminated)
        keepNewest(terminatedObservations, KeptTerminated * 4)
      }
    }

    /** Drops the oldest entries of an insertion-ordered map beyond `n`. */
    private def keepNewest(map: java.util.LinkedHashMap[_, _], n: Int): Unit = {
      val oldest = map.keySet.iterator
      while (map.size > n) { oldest.next(); oldest.remove() }
    }

    /** A DataFrame started twice runs one operator instance in two queries: it stays while either runs. */
    private def stillObserved(name: String): Boolean = observedBy.values.asScala.exists(_.contains(name))
  }
}
