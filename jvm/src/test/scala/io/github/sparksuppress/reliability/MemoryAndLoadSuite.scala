package io.github.sparksuppress.reliability

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.sql.Timestamp
import java.time.Duration
import java.util.concurrent.atomic.AtomicLong

import org.apache.spark.sql.{DataFrame, Encoders, Row}
import io.github.sparksuppress.shims.StreamingRuntime.MemoryStream
import org.apache.spark.sql.functions.{col, concat, lit}
import org.apache.spark.sql.streaming.{StreamingQuery, StreamingQueryProgress, Trigger}
import org.apache.spark.sql.types._

import io.github.sparksuppress.api._
import io.github.sparksuppress.api.Metrics
import io.github.sparksuppress.spark.SparkSessionSuite

/**
 * Memory and load: a bounded buffer stays bounded however many keys stream through (read from Spark's own state
 * metrics), a strict buffer stops at its bound and restarts once the bound is raised, and (RELIABILITY_LONG) a soak
 * run of a rate source keeps state size and batch duration flat.
 */
class MemoryAndLoadSuite extends SparkSessionSuite {
  private val T0 = OperatorsUnderTest.T0
  private val updates = StructType(Seq(
    StructField("key", StringType),
    StructField("ts", TimestampType),
    StructField("value", LongType)
  ))

  /** Spark's estimate of the bytes of the current state version (HDFS-backed provider). */
  private def stateBytes(p: StreamingQueryProgress): Long =
    p.stateOperators.head.customMetrics.get("stateOnCurrentVersionSizeBytes").longValue

  test("emitEarlyWhenFull keeps the state bounded while distinct keys stream through; nothing is lost") {
    val keys = ReliabilityLevel.pick(20000, 1000000)
    val batches = 10
    val maxRecords = 1000L
    val input = MemoryStream[Row](Encoders.row(updates), spark.sqlContext)
    val suppressed =
      Suppressed.untilTimeLimit(Duration.ofHours(1), BufferConfig.maxRecords(maxRecords).emitEarlyWhenFull())
        .withName("bounded-load")
    val emitted = new AtomicLong()
    val query = input.toDF().withWatermark("ts", "0 seconds").transform(Suppress("key", "ts", suppressed))
      .writeStream.foreachBatch { (b: DataFrame, _: Long) => emitted.addAndGet(b.count()); () }
      .option("checkpointLocation", tempDir("rel-load")).start()
    try {
      val perBatch = keys / batches
      val sizes = (0 until batches).map { b =>
        input.addData((0 until perBatch).map(i =>
          Row(s"key-${b * perBatch + i}", new Timestamp(T0 + b * perBatch + i), i.toLong)
        ))
        query.processAllAvailable()
        val p = query.recentProgress.filter(_.numInputRows > 0).last
        (p.stateOperators.head.numRowsTotal, stateBytes(p))
      }
      val shards = spark.conf.get("spark.sql.shuffle.partitions").toLong
      // Each shard's state value holds at most maxRecords entries of ~30 bytes of key and value (plus headers).
      val bound = shards * maxRecords * 200
      assert(sizes.forall(_._1 == shards), s"one state row per shard: $sizes")
      assert(sizes.forall(_._2 <= bound), s"state bytes per batch $sizes exceed $bound")
      assert(sizes.last._2 <= sizes(1)._2 * 1.2, s"state grows: $sizes")
      val buffered = Metrics.forQuery(query)("bounded-load")("suppression-buffer-count-current").toLong
      assert(buffered === shards * maxRecords)
      assert(emitted.get + buffered === keys.toLong, "every key was emitted early or is still buffered")
      info(s"$keys keys: state rows and bytes after each batch: ${sizes.mkString(", ")}")
    } finally query.stop()
  }

  test("shutDownWhenFull stops at the bound with the documented error; raising the bound restarts the checkpoint") {
    spark.conf.set("spark.sql.shuffle.partitions", "1")
    val run =
      try new FileSinkRun(spark, Seq(InputSpec("updates", updates, Some("ts"))), tempDir("rel-strict"))
      finally spark.conf.set("spark.sql.shuffle.partitions", "2")
    def op(bound: Long) = run.inputs("updates").transform(Suppress(
      "key",
      "ts",
      Suppressed.untilTimeLimit(
        Duration.ofSeconds(10),
        BufferConfig.maxRecords(bound).shutDownWhenFull()
      ).withName("strict-load")
    ))
    def rows(from: Int, until: Int) =
      Step("updates", (from until until).map(i => Row(s"k$i", new Timestamp(T0 + i), i.toLong)))
    spark.conf.set("spark.sql.shuffle.partitions", "1")
    try run.start(op(5))
    finally spark.conf.set("spark.sql.shuffle.partitions", "2")
    run.feed(rows(0, 3))
    run.feed(rows(3, 5))
    val e = intercept[Exception](run.feed(rows(5, 8)))
    val m = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")
    assert(m.contains("strict-load buffer exceeded its max capacity. Currently [6/5] records"), m)
    assert(m.contains("raise the bound"), m)
    run.stop()

    run.start(op(100))
    run.drain()
    run.feed(Step("updates", Seq(Row("tick", new Timestamp(T0 + 60000), -1L))))
    run.stop()
    val out = run.outputByBatch().flatMap(_._2).filterNot(_.startsWith("(tick"))
    assert(
      out.map(_.split(", ").head.drop(1)).sorted === (0 until 8).map(i => s"k$i").sorted,
      "the failed batch ran again under the raised bound: every key emitted once"
    )
  }

  if (ReliabilityLevel.long) test("soak: a steady rate source keeps state size and batch duration flat") {
    val seconds = ReliabilityLevel.soakSeconds
    val rate = 2000
    val keys = 5000
    val stream = spark.readStream.format("rate").option("rowsPerSecond", rate.toLong).load()
      .select(concat(lit("k"), (col("value") % keys).cast("string")).as("key"), col("timestamp").as("ts"), col("value"))
      .withWatermark("ts", "1 second")
    val query: StreamingQuery = stream
      .transform(Suppress(
        "key",
        "ts",
        Suppressed.untilTimeLimit(Duration.ofSeconds(5), BufferConfig.unbounded()).withName("soak")
      ))
      .writeStream.format("noop").trigger(Trigger.ProcessingTime(1000L))
      .option("checkpointLocation", tempDir("rel-soak")).start()
    val progress = scala.collection.mutable.ArrayBuffer.empty[StreamingQueryProgress]
    val deadline = System.nanoTime() + seconds * 1000000000L
    try {
      var seen = 0L
      while (System.nanoTime() < deadline && query.exception.isEmpty) {
        query.awaitTermination(5000)
        query.recentProgress.filter(_.batchId >= seen).foreach { p => progress += p; seen = p.batchId + 1 }
      }
    } finally query.stop()
    assert(query.exception.isEmpty, query.exception)
    val data = progress.filter(_.numInputRows > 0).toSeq
    assert(data.size >= 20, s"only ${data.size} batches ran")
    def mean(xs: Seq[Double]) = xs.sum / xs.size
    val quarter = data.size / 4
    val (second, last) = (data.slice(quarter, 2 * quarter), data.takeRight(quarter))
    val rows =
      (second.map(_.stateOperators.head.numRowsTotal.toDouble), last.map(_.stateOperators.head.numRowsTotal.toDouble))
    val bytes = (second.map(p => stateBytes(p).toDouble), last.map(p => stateBytes(p).toDouble))
    val duration = (second.map(_.batchDuration.toDouble), last.map(_.batchDuration.toDouble))
    val report =
      s"""{"date": "${java.time.Instant.now()}", "machine": {"cores": ${Runtime.getRuntime.availableProcessors},
         |  "maxHeapBytes": ${Runtime.getRuntime.maxMemory}, "os": "${System.getProperty(
          "os.name"
        )} ${System.getProperty("os.version")}",
         |  "java": "${System.getProperty("java.version")}", "spark": "${spark.version}"},
         |  "seconds": $seconds, "rowsPerSecond": $rate, "keys": $keys, "batches": ${data.size},
         |  "stateRows": {"secondQuarterMean": ${mean(rows._1)}, "lastQuarterMean": ${mean(rows._2)}},
         |  "stateBytes": {"secondQuarterMean": ${mean(bytes._1)}, "lastQuarterMean": ${mean(bytes._2)}},
         |  "batchDurationMs": {"secondQuarterMean": ${mean(duration._1)}, "lastQuarterMean": ${mean(duration._2)}},
         |  "perBatch": [${data.map(p =>
          s"[${p.batchId}, ${p.numInputRows}, ${p.stateOperators.head.numRowsTotal}, ${stateBytes(p)}, " +
            s"${p.batchDuration}]"
        ).mkString(", ")}]}
         |""".stripMargin
    val out = new File("benchmarks/results", s"soak-${System.currentTimeMillis()}.json")
    out.getParentFile.mkdirs()
    Files.write(out.toPath, report.getBytes(StandardCharsets.UTF_8))
    info(s"soak results written to $out")
    assert(mean(rows._2) <= mean(rows._1) * 1.25, s"state rows grow: $report")
    assert(mean(bytes._2) <= mean(bytes._1) * 1.25, s"state bytes grow: $report")
    assert(mean(duration._2) <= mean(duration._1) * 2.0 + 200, s"batches slow down: $report")
  }
}
