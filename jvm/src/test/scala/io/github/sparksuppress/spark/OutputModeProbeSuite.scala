package io.github.sparksuppress.spark

import java.time.Duration

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.functions.{count, lit}
import org.apache.spark.sql.types._

import io.github.sparksuppress.api._
import io.github.sparksuppress.testing.TestDriver

/**
 * Pins the output modes Spark accepts for a query that uses this library's operators (README.md and docs/emit.md say
 * so to users): every operator runs on a `flatMapGroupsWithState` in Append mode, so the query must write in Append,
 * Spark's default; Update and Complete are refused when the query starts, with Spark's words about
 * `flatMapGroupsWithState`, which the user never called. Each operator already chooses what it emits (its
 * `EmitStrategy` or `Suppressed`), so Append delivers exactly those rows. If a Spark release accepts another mode, or
 * words the refusal differently, this suite fails and the docs must change with it.
 */
class OutputModeProbeSuite extends SparkSessionSuite {

  private val schema =
    StructType(Seq(StructField("key", StringType), StructField("ts", TimestampType), StructField("value", StringType)))

  private def updates(d: TestDriver): DataFrame = d.input.transform(AggregateWindowed(
    Seq("key"),
    "ts",
    TimeWindows.ofSizeWithNoGrace(Duration.ofMillis(10)),
    Seq(count(lit(1)).as("n")),
    EmitStrategy.onWindowUpdate()
  ))

  private def refusal(df: DataFrame, mode: String, name: String): String = {
    val e = intercept[Exception](df.writeStream.format("memory").outputMode(mode).queryName(name).start())
    e.getMessage
  }

  test("Append starts; Update and Complete are refused at start(), in Spark's words about flatMapGroupsWithState") {
    val d = TestDriver(spark, schema, "ts")
    val untilClosed = Suppressed.untilWindowCloses(BufferConfig.unbounded())
    val finals = updates(d).transform(Suppress(Seq("key"), "ts", untilClosed))
    for ((df, what) <- Seq(updates(d) -> "aggregation", finals -> "chain")) {
      df.writeStream.format("memory").outputMode("append").queryName(s"output_mode_append_$what").start().stop()
      val update = refusal(df, "update", s"output_mode_update_$what")
      assert(
        update.contains("flatMapGroupsWithState in append mode is not supported with Update output mode"),
        update
      )
      // Spark 3.5 and 4.x word this one differently; both name the mode and refuse it.
      val complete = refusal(df, "complete", s"output_mode_complete_$what")
      assert(complete.toLowerCase.contains("complete") && complete.contains("not supported"), complete)
    }
  }
}
