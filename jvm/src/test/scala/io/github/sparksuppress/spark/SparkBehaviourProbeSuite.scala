package io.github.sparksuppress.spark

import java.sql.Timestamp

import scala.annotation.nowarn
import scala.collection.mutable

import org.apache.spark.sql.{Column, DataFrame, Dataset, Encoders, Row}
import org.apache.spark.sql.catalyst.plans.logical.MapGroups
import io.github.sparksuppress.shims.StreamingRuntime.MemoryStream
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types.{Metadata, MetadataBuilder}
import org.apache.spark.sql.streaming.{GroupState, GroupStateTimeout, OutputMode, StreamingQuery, Trigger}
import io.github.sparksuppress.spark.common.{ShardHeartbeats, WatermarkBypass}

/**
 * Pins down the Spark behaviours the adapters rely on (see DESIGN.md, "Known Spark traps"). If a Spark upgrade
 * changes one of them, this suite says which.
 */
class SparkBehaviourProbeSuite extends SparkSessionSuite {
  import SparkBehaviourProbeSuite.Ev

  /** Feeds `a@0, a@1s, b@1s, c@0, d@5s, e@2s` one per batch; returns the (key, seconds) the function saw. */
  private def seen(
      bypass: Boolean,
      timeout: GroupStateTimeout = GroupStateTimeout.EventTimeTimeout()
  ): Seq[(String, Long)] = {
    val session = spark
    import session.implicits._
    val input = MemoryStream[Ev](implicitly[org.apache.spark.sql.Encoder[Ev]], spark.sqlContext)
    val base = input.toDF().withWatermark("ts", "0 seconds")
    val df = if (bypass) WatermarkBypass(base) else base
    val schema = df.schema
    val out = df.groupBy(col("key")).as[String, Row](Encoders.STRING, Encoders.row(schema))
      .flatMapGroupsWithState(OutputMode.Append(), timeout) {
        (key: String, rows: Iterator[Row], state: GroupState[Long]) =>
          rows.map(r => s"$key@${r.getAs[Timestamp]("ts").getTime / 1000}")
      }(Encoders.scalaLong, Encoders.STRING)
    val processingTime = timeout == GroupStateTimeout.ProcessingTimeTimeout()
    val table = s"probe_${bypass}_$processingTime"
    // With processing-time timeouts every trigger runs a batch, so processAllAvailable never returns: a trigger
    // interval, and a wait for the batch that read each row.
    val writer = out.writeStream.format("memory").queryName(table).outputMode("append")
    val q = (if (processingTime) writer.trigger(Trigger.ProcessingTime(10L)) else writer).start()
    try {
      for (((k, s), i) <- Seq("a" -> 0, "a" -> 1, "b" -> 1, "c" -> 0, "d" -> 5, "e" -> 2).zipWithIndex) {
        input.addData(Ev(k, new Timestamp(s * 1000L)))
        if (!processingTime) q.processAllAvailable()
        else {
          val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
          while (q.recentProgress.map(_.numInputRows).sum <= i && System.nanoTime() < deadline) q.awaitTermination(5L)
          // and one more batch, which runs with the watermark this row moved
          val batches = q.recentProgress.length
          while (q.recentProgress.length <= batches + 1 && System.nanoTime() < deadline) q.awaitTermination(5L)
        }
      }
      spark.table(table).as[String].collect().toSeq.map { s =>
        val Array(k, t) = s.split("@"); (k, t.toLong)
      }.sorted
    } finally q.stop()
  }

  test("flatMapGroupsWithState with EventTimeTimeout drops rows at or below the watermark") {
    assert(seen(bypass = false) === Seq("a" -> 1L, "d" -> 5L))
  }

  test(
    "with ProcessingTimeTimeout nothing is dropped: the idle timeout's operators read the watermark through the " +
      "bypass only"
  ) {
    assert(seen(bypass = false, GroupStateTimeout.ProcessingTimeTimeout()) ===
      Seq("a" -> 0L, "a" -> 1L, "b" -> 1L, "c" -> 0L, "d" -> 5L, "e" -> 2L))
  }

  /** A stream of `Ev`s, watermarked (through the bypass) and grouped by key into `fn`. */
  private def grouped(timeout: GroupStateTimeout)(fn: (String, Iterator[Row], GroupState[Long]) => Iterator[String])
      : (MemoryStream[Ev], Dataset[String]) = {
    val input = MemoryStream[Ev](Encoders.product[Ev], spark.sqlContext)
    val df = WatermarkBypass(input.toDF().withWatermark("ts", "0 seconds"))
    (
      input,
      df.groupBy(col("key")).as[String, Row](Encoders.STRING, Encoders.row(df.schema))
        .flatMapGroupsWithState(OutputMode.Append(), timeout)(fn)(Encoders.scalaLong, Encoders.STRING)
    )
  }

  private def executed(q: StreamingQuery): Int = q.recentProgress.count(_.durationMs.containsKey("addBatch"))

  private def await(q: StreamingQuery, batches: Int): Unit = {
    val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
    while (executed(q) < batches && System.nanoTime() < deadline) q.awaitTermination(5L)
    assert(executed(q) >= batches, s"$batches micro-batches within 60 s")
  }

  /**
   * A query whose groups time out on processing time, to `checkpoint`: its input, and a start with a trigger. Its
   * first run is one batch that ends by itself, so its batch is committed (`Trigger.AvailableNow` never ends here:
   * the timeouts ask for another batch forever).
   */
  private def timingOut(checkpoint: String): (MemoryStream[Ev], Trigger => StreamingQuery) = {
    val (input, out) = grouped(GroupStateTimeout.ProcessingTimeTimeout()) {
      (key: String, rows: Iterator[Row], state: GroupState[Long]) => state.setTimeoutDuration(1L); rows.map(_ => key)
    }
    val start = (trigger: Trigger) =>
      out.writeStream.outputMode("append").foreachBatch((b: Dataset[String], _: Long) => { b.collect(); () })
        .option("checkpointLocation", checkpoint).trigger(trigger).start()
    input.addData(Ev("a", new Timestamp(0)))
    val first = start(Trigger.Once(): @nowarn("cat=deprecation"))
    try assert(first.awaitTermination(60L * 1000), "the first run ends once its input is read")
    finally first.stop()
    assert(executed(first) === 1, "the first run read the row")
    (input, start)
  }

  test("a restarted query runs no micro-batch until input arrives, though an operator has processing-time timeouts") {
    val (input, start) = timingOut(tempDir("probe-restart"))
    val second = start(Trigger.ProcessingTime(20L))
    try {
      second.awaitTermination(1500L)
      assert(executed(second) === 0, "some 75 triggers, no micro-batch")
      input.addData(Ev("b", new Timestamp(0)))
      await(second, 2) // the batch with the row, then one without input: the timeouts drive batches again
    } finally second.stop()
  }

  test("a restart that runs an uncommitted batch again then goes on running micro-batches without input") {
    val checkpoint = tempDir("probe-recovered")
    val (_, start) = timingOut(checkpoint)
    // What a stop amid a batch leaves behind (seen on a loaded machine): the batch's offsets written, its commit not.
    assert(new java.io.File(checkpoint, "commits/0").delete(), "the first run committed its batch")
    val second = start(Trigger.ProcessingTime(20L))
    try await(second, 3) // the batch again, then batches without input: its last execution asks for them
    finally second.stop()
  }

  test(
    "an alias with empty metadata keeps the child's metadata on Spark 3.5 and 4.0 only (WatermarkBypass's own key)"
  ) {
    val marked = spark.range(1).select(col("id").as("ts", new MetadataBuilder().putLong("k", 1L).build()))
    val realiased = marked.select(col("ts").as("ts", Metadata.empty)).schema("ts").metadata
    val keepsChild = Set("3.5", "4.0").contains(org.apache.spark.SPARK_VERSION.split('.').take(2).mkString("."))
    assert(realiased.contains("k") === keepsChild, s"metadata after an empty-metadata alias: $realiased")
  }

  test("the watermark bypass lets every row reach the function") {
    assert(seen(bypass = true) === Seq("a" -> 0L, "a" -> 1L, "b" -> 1L, "c" -> 0L, "d" -> 5L, "e" -> 2L))
  }

  test("processAllAvailable runs the no-data batch, so timeouts due after a step fire within that step") {
    val session = spark
    import session.implicits._
    val (input, out) = grouped(GroupStateTimeout.EventTimeTimeout()) {
      (key: String, rows: Iterator[Row], state: GroupState[Long]) =>
        if (state.hasTimedOut) { state.remove(); Iterator(s"$key timed out at ${state.getCurrentWatermarkMs()}") }
        else {
          val max = rows.map(_.getAs[Timestamp]("ts").getTime).max
          state.update(max)
          state.setTimeoutTimestamp(max + 999) // fires once the watermark passes max + 999
          Iterator.empty
        }
    }
    val q = out.writeStream.format("memory").queryName("probe_nodata").outputMode("append").start()
    try {
      input.addData(Ev("a", new Timestamp(0)))
      q.processAllAvailable()
      assert(spark.table("probe_nodata").count() === 0)
      input.addData(Ev("b", new Timestamp(1000)))
      q.processAllAvailable()
      // Timeout 999 < watermark 1000 only in the no-data batch after step 2; it ran inside processAllAvailable.
      assert(spark.table("probe_nodata").as[String].collect().toSeq === Seq("a timed out at 1000"))
    } finally q.stop()
  }

  test(
    "a batch's watermark is the largest of the last and the previous batch's largest event time less the delay; a " +
      "restart resumes from the one the last committed batch computed (EarlyClose)"
  ) {
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "false") // one batch per addData
    try {
      val input = MemoryStream[Ev](Encoders.product[Ev], spark.sqlContext)
      val counts = input.toDF().withWatermark("ts", "2 seconds").groupBy(col("key")).count()
      val checkpoint = tempDir("probe-watermark")
      def start() = counts.writeStream.outputMode("update").option("checkpointLocation", checkpoint)
        .foreachBatch((b: DataFrame, _: Long) => { b.collect(); () }).start()
      def step(q: StreamingQuery, seconds: Int*): String = {
        input.addData(seconds.map(s => Ev("k", new Timestamp(s * 1000L))))
        q.processAllAvailable()
        q.lastProgress.eventTime.get("watermark")
      }
      val first = start()
      try {
        assert(step(first, 10, 4) === "1970-01-01T00:00:00.000Z")
        assert(step(first, 1) === "1970-01-01T00:00:08.000Z", "10 s less the 2 s delay")
        assert(step(first, 7) === "1970-01-01T00:00:08.000Z", "never lower: 1 s less the delay")
        assert(step(first, 20) === "1970-01-01T00:00:08.000Z")
      } finally first.stop()
      val second = start()
      // No batch was planned with 18 s before the stop (no-data batches are off): it comes from the commit log.
      try assert(step(second, 0) === "1970-01-01T00:00:18.000Z", "20 s less the delay, from the batch before the stop")
      finally second.stop()
    } finally spark.conf.unset("spark.sql.streaming.noDataMicroBatches.enabled")
  }

  test("a Catalyst generator's terminate runs for every partition, an empty partition 0 included (ShardHeartbeats)") {
    // range(1, 2) over two partitions: partition 0 is empty, partition 1 holds the one row.
    val df = spark.range(1, 2, 1, 2).selectExpr("cast(id as int) as side", "cast(null as binary) as shard")
    val shards = Array(Array[Byte](7), Array[Byte](8), Array[Byte](9))
    val out = ShardHeartbeats(df, shards, "side", 2, "shard").collect().toSeq
    assert(out.map(_.getInt(0)).sorted === Seq(1, 2, 2, 2), "the row passes through; one heartbeat per shard, once")
    assert(out.filter(_.getInt(0) == 2).map(_.getAs[Array[Byte]](1).toSeq).sortBy(_.head) === shards.toSeq.map(_.toSeq))
  }

  test("grouping by an alias of a column adds it to the grouped rows again; by the column itself, not (ChainPlan)") {
    // The rows a KeyValueGroupedDataset groups, and shuffles, are its input's columns plus any grouping expression
    // that is not one of them: a per-key windowed aggregation groups by the map side's key columns as they are.
    val df = spark.range(2).selectExpr("cast(id as string) as key", "id as v")
    def grouped(key: Column): Seq[String] =
      df.groupBy(key).as[String, Row](Encoders.STRING, Encoders.row(df.schema))
        .mapGroups((k: String, _: Iterator[Row]) => k)(Encoders.STRING)
        .queryExecution.analyzed.collectFirst { case m: MapGroups => m.child.output.map(_.name) }.get
    assert(grouped(col("key").as("key")) === Seq("key", "v", "key"))
    assert(grouped(col("key")) === Seq("key", "v"))
  }
}

object SparkBehaviourProbeSuite {
  case class Ev(key: String, ts: Timestamp)
}
