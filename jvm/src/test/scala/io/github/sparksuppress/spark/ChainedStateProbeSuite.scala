package io.github.sparksuppress.spark

import java.sql.Timestamp

import org.apache.spark.sql.{DataFrame, Encoders, Row}
import io.github.sparksuppress.shims.StreamingRuntime.MemoryStream
import org.apache.spark.sql.functions
import org.apache.spark.sql.functions.{col, count, lit}
import org.apache.spark.sql.streaming.{GroupState, GroupStateTimeout, OutputMode}
import org.apache.spark.sql.types.{LongType, StringType, StructField, StructType, TimestampType}

/**
 * Pins down what the stream-table join's plan relies on (Spark 4.3.0): two `flatMapGroupsWithState` operators chained
 * in one query (the first grouped by shard, the second by key), fed by the union of two streams of which only one has
 * a watermark. If a Spark upgrade changes one of these, this suite says which.
 */
class ChainedStateProbeSuite extends SparkSessionSuite {
  import ChainedStateProbeSuite._

  private val firstOut = StructType(Seq(
    StructField("key", StringType),
    StructField("note", StringType),
    StructField("ts", TimestampType)
  ))

  /** stream (watermarked, delay 0) ∪ table -> fMGWS by one shard -> fMGWS by key; returns (inputs, output). */
  private def chain(firstTimeout: GroupStateTimeout): (MemoryStream[Ev], MemoryStream[Ev], DataFrame) = {
    val stream = MemoryStream[Ev](evEncoder, spark.sqlContext)
    val table = MemoryStream[Ev](evEncoder, spark.sqlContext)
    val s = stream.toDF().withWatermark("ts", "0 seconds").select(lit("s").as("side"), col("key"), col("ts"))
    val t = table.toDF().select(lit("t").as("side"), col("key"), col("ts"))
    val unioned = s.unionByName(t).withColumn("shard", lit(1))
    val first = unioned.groupBy(col("shard")).as[Int, Row](Encoders.scalaInt, Encoders.row(unioned.schema))
      .flatMapGroupsWithState(OutputMode.Append(), firstTimeout) {
        (_: Int, rows: Iterator[Row], _: GroupState[Long]) =>
          rows.map(r => Row(r.getString(1), s"${r.getString(0)}@${r.getTimestamp(2).getTime}", r.getTimestamp(2)))
      }(Encoders.scalaLong, Encoders.row(firstOut))
    val second = first.groupBy(col("key")).as[String, Row](Encoders.STRING, Encoders.row(firstOut))
      .flatMapGroupsWithState(OutputMode.Append(), GroupStateTimeout.NoTimeout()) {
        (key: String, rows: Iterator[Row], state: GroupState[Long]) =>
          val seen = rows.toSeq
          val n = state.getOption.getOrElse(0L) + seen.size
          state.update(n)
          seen.iterator.map(r => Row(key, s"${r.getString(1)}#$n", r.getTimestamp(2)))
      }(Encoders.scalaLong, Encoders.row(firstOut))
    (stream, table, second)
  }

  test("fMGWS(Append, EventTimeTimeout) may not be followed by another stateful operator") {
    val (_, _, out) = chain(GroupStateTimeout.EventTimeTimeout())
    val e = intercept[Exception](out.writeStream.format("memory").queryName("probe_chain_event").start())
    assert(
      e.getMessage.contains("Detected pattern of possible 'correctness' issue due to global watermark"),
      e.getMessage
    )
  }

  test("fMGWS(Append, NoTimeout) -> fMGWS(Append, NoTimeout) runs in one query; no row is dropped as late") {
    val (stream, table, out) = chain(GroupStateTimeout.NoTimeout())
    val q = out.writeStream.format("memory").queryName("probe_chain").outputMode("append").start()
    def step(add: => Unit): Seq[String] = {
      val before = spark.table("probe_chain").collect().toSeq
      add
      q.processAllAvailable()
      spark.table("probe_chain").collect().toSeq.diff(before).map(r => s"${r.getString(0)}:${r.getString(1)}").sorted
    }
    try {
      assert(step(stream.addData(Ev("a", new Timestamp(5)))) === Seq("a:s@5#1"))
      assert(step(table.addData(Ev("a", new Timestamp(1)))) === Seq("a:t@1#2"))
      // The watermark is 5 now; rows at or below it still reach both functions (no event-time timeout, no filter).
      assert(step(stream.addData(Ev("b", new Timestamp(2)), Ev("a", new Timestamp(5)))) === Seq("a:s@5#3", "b:s@2#1"))
    } finally q.stop()
  }

  test("the chain's output can be watermarked again and feed a windowed aggregation in the same query") {
    val (stream, _, out) = chain(GroupStateTimeout.NoTimeout())
    val counts = out.withWatermark(
      "ts",
      "0 seconds"
    ).groupBy(functions.window(col("ts"), "10 milliseconds")).agg(count(lit(1)).as("n"))
    val q = counts.writeStream.format("memory").queryName("probe_chain_agg").outputMode("append").start()
    try {
      stream.addData(Ev("a", new Timestamp(1)), Ev("b", new Timestamp(2)))
      q.processAllAvailable()
      stream.addData(Ev("a", new Timestamp(25)))
      q.processAllAvailable()
      val rows =
        spark.table("probe_chain_agg").collect().map(r => (r.getStruct(0).getTimestamp(0).getTime, r.getLong(1)))
      assert(rows.toSeq === Seq((0L, 2L)))
    } finally q.stop()
  }
}

object ChainedStateProbeSuite {
  case class Ev(key: String, ts: Timestamp)
  private val evEncoder = Encoders.product[Ev]
}
