package io.github.sparksuppress.spark

import java.sql.Timestamp

import org.apache.spark.sql.{Encoders, Row}
import io.github.sparksuppress.shims.StreamingRuntime.MemoryStream
import org.apache.spark.sql.functions.{col, lit}
import org.apache.spark.sql.streaming.{GroupState, GroupStateTimeout, OutputMode, Trigger}
import org.apache.spark.sql.types.{LongType, StringType, StructField, StructType}

import io.github.sparksuppress.spark.common.WatermarkBypass

/**
 * Pins down what lets the grace join release a starved shard (Spark 4.3.0): a `flatMapGroupsWithState` with
 * `ProcessingTimeTimeout` may be followed by another stateful operator (Spark's global-watermark check refuses only
 * event-time timeouts), it reads the query's watermark when its input has a watermarked column (the bypass anchor),
 * and a group whose processing-time timeout has passed is called in a micro-batch without input: Spark runs such
 * batches on every trigger.
 */
class ProcessingTimeChainProbeSuite extends SparkSessionSuite {
  import ChainedStateProbeSuite.Ev

  private val firstOut = StructType(Seq(StructField("key", StringType), StructField("note", StringType)))

  test(
    "fMGWS(ProcessingTimeTimeout) -> fMGWS(NoTimeout): accepted; a timed-out group is called without input and " +
      "reads the watermark"
  ) {
    val stream = MemoryStream[Ev](Encoders.product[Ev], spark.sqlContext)
    val table = MemoryStream[Ev](Encoders.product[Ev], spark.sqlContext)
    val s = stream.toDF().withWatermark(
      "ts",
      "0 seconds"
    ).select(lit("s").as("side"), col("key"), col("ts").cast(LongType).as("ts"))
    val t = table.toDF().select(lit("t").as("side"), col("key"), col("ts").cast(LongType).as("ts"))
    val unioned = s.unionByName(t).withColumn(
      "shard",
      lit(1)
    ).select(col("side"), col("key"), col("ts"), col("shard"), WatermarkBypass.anchor)
    val first = unioned.groupBy(col("shard")).as[Int, Row](Encoders.scalaInt, Encoders.row(unioned.schema))
      .flatMapGroupsWithState(OutputMode.Append(), GroupStateTimeout.ProcessingTimeTimeout()) {
        (_: Int, rows: Iterator[Row], state: GroupState[Long]) =>
          val seen = rows.toSeq
          val wm = state.getCurrentWatermarkMs()
          state.update(wm)
          state.setTimeoutDuration(1L)
          if (seen.isEmpty && state.hasTimedOut) Iterator.single(Row("timer", s"wm=$wm"))
          else seen.iterator.map(r => Row(r.getString(1), s"${r.getString(0)}@wm=$wm"))
      }(Encoders.scalaLong, Encoders.row(firstOut))
    val second = first.groupBy(col("key")).as[String, Row](Encoders.STRING, Encoders.row(firstOut))
      .flatMapGroupsWithState(OutputMode.Append(), GroupStateTimeout.NoTimeout()) {
        (key: String, rows: Iterator[Row], _: GroupState[Long]) => rows.map(r => Row(key, r.getString(1)))
      }(Encoders.scalaLong, Encoders.row(firstOut))
    val q = second.writeStream.format("memory").queryName("probe_pt_chain").outputMode("append")
      .trigger(Trigger.ProcessingTime(10L)).start()
    def notes = spark.table("probe_pt_chain").collect().toSeq.map(r => s"${r.getString(0)}:${r.getString(1)}")
    try {
      stream.addData(Ev("a", new Timestamp(5000)))
      // Batches keep coming without input; wait (bounded) for the first one after the watermark moved to 5 s.
      val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
      while (!notes.contains("timer:wm=5000") && System.nanoTime() < deadline) q.awaitTermination(20L)
      assert(notes.contains("a:s@wm=0"), notes)
      assert(
        notes.contains("timer:wm=5000"),
        s"a batch without input called the timed-out group with the watermark: $notes"
      )
      assert(q.exception.isEmpty)
    } finally q.stop()
  }
}
