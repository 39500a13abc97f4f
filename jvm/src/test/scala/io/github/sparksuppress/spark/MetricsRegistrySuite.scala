package io.github.sparksuppress.spark

import java.time.Duration

import org.apache.spark.ListenerBusAccess
import org.apache.spark.sql.{DataFrame, Encoders}
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
      .transform(Suppress("key", "ts",
        Suppressed.untilTimeLimit(Duration.ofDays(1), BufferConfig.unbounded()).withName(name)))

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
    assert(operators <= operatorsBefore, s"$queries stopped queries left ${operators - operatorsBefore} operators behind")
    assert(terminated <= MetricsRegistry.KeptTerminated)
    assert(bufferCount(last, s"op-$queries") === 1.0)
  }
}
