package io.github.sparksuppress.spark.chain

import java.time.Duration

import org.apache.spark.sql.functions.{col, count, lit, window}
import org.apache.spark.sql.types._

import io.github.sparksuppress.api._
import io.github.sparksuppress.spark.SparkSessionSuite
import io.github.sparksuppress.testing.TestDriver

/**
 * Pins what Spark 4.3.0 does when one of ITS stateful operators follows a chain of this library's (docs/chains.md
 * says so to users): the query is refused when it starts, because the chain's flatMapGroupsWithState with event-time
 * timeouts may emit rows older than the watermark, which a downstream stateful operator would silently drop. If a
 * Spark upgrade changes this, this suite fails and the docs must change with it.
 */
class SparkOperatorAfterChainProbeSuite extends SparkSessionSuite {

  private val schema =
    StructType(Seq(StructField("key", StringType), StructField("ts", TimestampType), StructField("value", StringType)))

  test(
    "Spark's windowed count after aggregate_windowed -> suppress is refused when the query starts, naming the " +
      "watermark issue"
  ) {
    val d = TestDriver(spark, schema, "ts")
    val finals = d.input
      .transform(AggregateWindowed(
        Seq("key"),
        "ts",
        TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(2)),
        Seq(count(lit(1)).as("n")),
        EmitStrategy.onWindowUpdate()
      ))
      .transform(Suppress(Seq("key"), "ts", Suppressed.untilWindowCloses(BufferConfig.unbounded())))
    // Building the Spark operator succeeds: the refusal comes from Spark's checks at start().
    val counted = finals.withWatermark("ts", "0 seconds").groupBy(window(col("ts"), "10 milliseconds")).count()
    val e = intercept[Exception](counted.writeStream.format("memory").queryName("probe_after_chain").start())
    assert(
      e.getMessage.contains("Detected pattern of possible 'correctness' issue due to global watermark"),
      e.getMessage
    )
  }

  test("the same Spark operator after the chain's output without re-watermarking is refused too") {
    val d = TestDriver(spark, schema, "ts")
    val counts = d.input.transform(Aggregate(Seq("key"), "ts", Seq(count(lit(1)).as("n"))))
    val regrouped = counts.groupBy(col("key")).count()
    val e = intercept[Exception](
      regrouped.writeStream.format("memory").outputMode("update").queryName("probe_after_chain_2").start()
    )
    assert(
      e.getMessage.contains("Detected pattern of possible 'correctness' issue due to global watermark"),
      e.getMessage
    )
  }
}
