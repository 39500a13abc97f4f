package io.github.sparksuppress.spark

import java.lang.ref.WeakReference
import java.time.Duration

import scala.jdk.CollectionConverters._

import org.apache.spark.ListenerBusAccess
import org.apache.spark.sql.{DataFrame, Encoders, SparkSession}
import io.github.sparksuppress.shims.StreamingRuntime.MemoryStream
import org.apache.spark.sql.functions.{col, timestamp_millis}
import org.apache.spark.sql.streaming.StreamingQuery

import io.github.sparksuppress.api._
import io.github.sparksuppress.reliability.ReliabilityLevel
import io.github.sparksuppress.spark.common.MetricsRegistry

class MetricsRegistrySuite extends SparkSessionSuite {

  private def source(): MemoryStream[(String, Long)] =
    MemoryStream[(String, Long)](Encoders.tuple(Encoders.STRING, Encoders.scalaLong), spark.sqlContext)

  /** A suppress named `name` that holds every record (the time limit never passes in these tests). */
  private def held(input: MemoryStream[(String, Long)], name: String): DataFrame =
    input.toDF().select(col("_1").as("key"), timestamp_millis(col("_2")).as("ts"))
      .withWatermark("ts", "0 seconds")
      .transform(Suppress(
        "key",
        "ts",
        Suppressed.untilTimeLimit(Duration.ofDays(1), BufferConfig.unbounded()).withName(name)
      ))

  private def run(df: DataFrame, queryName: String): StreamingQuery =
    df.writeStream.format("memory").queryName(queryName).outputMode("append").start()

  private def bufferCount(q: StreamingQuery, operator: String): Double =
    Metrics.forQuery(q)(operator)("suppression-buffer-count-current")

  test("two queries running operators of the same name report separately, and keep their values once stopped") {
    val (a, b) = (source(), source())
    val qa = run(held(a, "same"), "same_a")
    val qb = run(held(b, "same"), "same_b")
    try {
      a.addData(("x", 1000L), ("y", 1000L), ("z", 1000L))
      b.addData(("x", 1000L))
      qa.processAllAvailable()
      qb.processAllAvailable()
      assert(bufferCount(qa, "same") === 3.0)
      assert(bufferCount(qb, "same") === 1.0)
    } finally {
      qa.stop()
      qb.stop()
    }
    ListenerBusAccess.drain(spark)
    assert(bufferCount(qa, "same") === 3.0)
    assert(bufferCount(qb, "same") === 1.0)
  }

  test("queries started and stopped one after another leave the registry bounded") {
    val queries = ReliabilityLevel.pick(quick = 80, whenFull = 1000)
    ListenerBusAccess.drain(spark)
    val (operatorsBefore, _) = MetricsRegistry.size
    var last: StreamingQuery = null
    (1 to queries).foreach { i =>
      val input = source()
      val q = run(held(input, s"op-$i"), s"bounded_$i")
      try {
        input.addData(("k", i.toLong))
        q.processAllAvailable()
      } finally q.stop()
      last = q
    }
    ListenerBusAccess.drain(spark)
    val (operators, terminated) = MetricsRegistry.size
    assert(
      operators <= operatorsBefore,
      s"$queries stopped queries left ${operators - operatorsBefore} operators behind"
    )
    assert(terminated <= MetricsRegistry.KeptTerminated)
    assert(bufferCount(last, s"op-$queries") === 1.0)
  }

  test("a session that ran operators is not held by the registry once its queries have stopped and it is dropped") {
    val dropped = ranAndDropped()
    ListenerBusAccess.drain(spark)
    // One System.gc() is a request, not a promise: ask again, a bounded number of times, until the session is gone.
    val collected = (1 to 20).exists { _ => System.gc(); dropped.get == null }
    assert(
      collected,
      "a session whose only query stopped, and which nothing of the test holds, was not collected: " +
        "something (the metrics registry held every session that built an operator) keeps it alive"
    )
  }

  /**
   * A new session (as a Spark Connect server makes one per client session) builds an operator and runs it to its end;
   * only a weak reference to the session leaves this method.
   */
  private def ranAndDropped(): WeakReference[SparkSession] = {
    val session = spark.newSession()
    val input = MemoryStream[(String, Long)](Encoders.tuple(Encoders.STRING, Encoders.scalaLong), session.sqlContext)
    val q = run(held(input, "dropped"), "dropped_q")
    try {
      input.addData(("x", 1000L))
      q.processAllAvailable()
      assert(bufferCount(q, "dropped") === 1.0)
    } finally q.stop()
    new WeakReference(session)
  }

  test("observation names answer only for the session whose operators they are, with one error for all others") {
    val input = source()
    val q = run(held(input, "private"), "private_q")
    try {
      input.addData(("x", 1000L), ("y", 1000L))
      q.processAllAvailable()
    } finally q.stop()
    ListenerBusAccess.drain(spark)
    val names = q.recentProgress.flatMap(_.observedMetrics.keySet.asScala).distinct.toSeq
    assert(names.exists(_.startsWith(MetricsRegistry.ObservationPrefix)), names)
    // Other observations of the query (a user's own Dataset.observe) are not this library's to answer or refuse.
    val asked = names :+ "users-own-observation"
    assert(Metrics.forObservations(spark, asked)("private")("suppression-buffer-count-current") === 2.0)

    val other = spark.newSession()
    val foreign = intercept[IllegalArgumentException](Metrics.forObservations(other, asked))
    val guessed = intercept[IllegalArgumentException](Metrics.forObservations(other, Seq("spark_suppress:private#1")))
    assert(foreign.getMessage.contains(s"'${names.find(_.startsWith("spark_suppress:")).get}' is not the observation"))
    assert(foreign.getMessage.contains("only for the queries of the session that asks"))
    // Another session's operator and a name that never existed are refused alike: the error tells nothing about them.
    assert(guessed.getMessage.replaceAll("'[^']*'", "N") === foreign.getMessage.replaceAll("'[^']*'", "N"))

    // The other session's own operators answer for it, and not for the first session.
    val otherInput = MemoryStream[(String, Long)](Encoders.tuple(Encoders.STRING, Encoders.scalaLong), other.sqlContext)
    val otherQuery = otherInput.toDF().select(col("_1").as("key"), timestamp_millis(col("_2")).as("ts"))
      .withWatermark("ts", "0 seconds")
      .transform(Suppress(
        "key",
        "ts",
        Suppressed.untilTimeLimit(Duration.ofDays(1), BufferConfig.unbounded()).withName("theirs")
      ))
      .writeStream.format("memory").queryName("theirs_q").outputMode("append").start()
    try {
      otherInput.addData(("z", 1000L))
      otherQuery.processAllAvailable()
      val theirs = otherQuery.recentProgress.flatMap(_.observedMetrics.keySet.asScala).distinct.toSeq
      assert(Metrics.forObservations(other, theirs)("theirs")("suppression-buffer-count-current") === 1.0)
      intercept[IllegalArgumentException](Metrics.forObservations(spark, theirs))
    } finally otherQuery.stop()
  }
}
