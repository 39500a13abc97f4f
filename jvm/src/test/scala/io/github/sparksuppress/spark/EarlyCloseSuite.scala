package io.github.sparksuppress.spark

import java.sql.Timestamp
import java.time.{Duration, Instant}

import scala.util.Random

import org.apache.spark.sql.{DataFrame, Encoders, Row}
import io.github.sparksuppress.shims.StreamingRuntime.MemoryStream
import org.apache.spark.sql.functions._
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.apache.spark.sql.types._

import io.github.sparksuppress.api._
import io.github.sparksuppress.spark.window.EarlyClose

/**
 * A lone windowed aggregation closes windows in the micro-batch that read their closing record (EarlyClose): the same
 * rows as closing them at the watermark, one batch earlier, nothing closed twice across a restart, and the rule off
 * wherever a row could reach the aggregation without passing the query's one watermark node.
 */
class EarlyCloseSuite extends SparkSessionSuite {

  private val schema = StructType(Seq(StructField("user", StringType), StructField("ts", TimestampType)))

  private def rec(user: String, t: Long) = Row(user, new Timestamp(t))

  private def stream(partitions: Int) = MemoryStream[Row](partitions)(Encoders.row(schema), spark.sqlContext)

  private def withRule[T](on: Boolean)(body: => T): T = {
    spark.conf.set(EarlyClose.Conf, on.toString)
    try body
    finally spark.conf.unset(EarlyClose.Conf)
  }

  /** (user, window start, window end, records) of an output row, times in epoch ms. */
  private def view(r: Row): (String, Long, Long, Long) = {
    val w = r.getStruct(1)
    (r.getString(0), w.getTimestamp(0).getTime, w.getTimestamp(1).getTime, r.getLong(2))
  }

  /** A query writing (batch id, row) of every output row. */
  private def start(
      plan: DataFrame,
      checkpoint: String,
      out: java.util.concurrent.ConcurrentLinkedQueue[(Long, Row)]
  ): StreamingQuery =
    plan.writeStream.trigger(Trigger.ProcessingTime(0L)).option("checkpointLocation", checkpoint)
      .foreachBatch { (b: DataFrame, id: Long) => b.collect().foreach(r => out.add((id, r))); () }.start()

  private def counts(windows: Windows): AggregateWindowed =
    AggregateWindowed(Seq("user"), "ts", windows, Seq(count("*").as("n")), EmitStrategy.onWindowClose())

  private def ms(n: Long) = Duration.ofMillis(n)

  test("a window another key's record closes leaves in that record's micro-batch, not the next one") {
    for (on <- Seq(true, false)) {
      val input = stream(1)
      val plan = withRule(on)(input.toDF().withWatermark("ts", "0 seconds").transform(counts(
        TimeWindows.ofSizeAndGrace(ms(10), ms(2))
      )))
      val out = new java.util.concurrent.ConcurrentLinkedQueue[(Long, Row)]()
      val q = start(plan, tempDir("early"), out)
      try {
        input.addData(rec("a", 0), rec("b", 100))
        q.processAllAvailable() // the batch that read b@100, then the one its watermark starts
        import scala.jdk.CollectionConverters._
        val emitted = out.asScala.toSeq.map { case (id, r) => (id, view(r)) }
        assert(emitted === Seq((if (on) 0L else 1L, ("a", 0L, 10L, 1L))), s"rule ${if (on) "on" else "off"}")
        assert(q.lastProgress.batchId === 1L && q.lastProgress.stateOperators.head.numRowsTotal === 1L, "b's window")
      } finally q.stop()
    }
  }

  private case class Emitted(batch: Long, row: (String, Long, Long, Long))

  /** Runs `steps` (each one micro-batch) through `windows`; every output row with its batch, and each batch's max. */
  private def run(
      on: Boolean,
      windows: Windows,
      delay: String,
      steps: Seq[Seq[Row]]
  ): (Seq[Emitted], Map[Long, Long], Double) = {
    val input = stream(3)
    val plan = withRule(on)(input.toDF().withWatermark("ts", delay).transform(counts(windows)))
    val out = new java.util.concurrent.ConcurrentLinkedQueue[(Long, Row)]()
    val q = start(plan, tempDir("early-rows"), out)
    try {
      steps.foreach { s => input.addData(s); q.processAllAvailable() }
      import scala.jdk.CollectionConverters._
      val maxTs = q.recentProgress.flatMap { p =>
        Option(p.eventTime.get("max")).map(m => p.batchId -> Instant.parse(m).toEpochMilli)
      }.toMap
      val dropped = Metrics.forQuery(q).head._2("dropped-records-total")
      (out.asScala.toSeq.map { case (id, r) => Emitted(id, view(r)) }, maxTs, dropped)
    } finally q.stop()
  }

  private val grace = 2L // every kind's: how long after its end a window closes

  // (name, windows, watermark delay): the map side combines time windows' records and passes session and sliding
  // windows' records on alone, so those two run with both delays.
  private val kinds: Seq[(String, Windows, Long)] = Seq(
    ("tumbling", TimeWindows.ofSizeAndGrace(ms(10), ms(grace)), 0L),
    ("tumbling", TimeWindows.ofSizeAndGrace(ms(10), ms(grace)), 5L),
    ("hopping", TimeWindows.ofSizeAndGrace(ms(10), ms(grace)).advanceBy(ms(5)), 5L),
    ("session", SessionWindows.ofInactivityGapAndGrace(ms(4), ms(grace)), 0L),
    ("session", SessionWindows.ofInactivityGapAndGrace(ms(4), ms(grace)), 5L),
    ("sliding", SlidingWindows.ofTimeDifferenceAndGrace(ms(6), ms(grace)), 0L)
  )

  for ((kind, windows, delayMs) <- kinds)
    test(s"$kind windows, watermark delay $delayMs ms, three input partitions: the same rows as at the watermark, " +
      "none later, one earlier only once the batch's largest time less the delay closed it") {
      val random = new Random(17)
      var base = 0L
      val steps = (0 until 6).map { _ =>
        base += 7
        // k9 trails the others: its windows are the ones other keys' records close.
        (0 until 15).map(_ => rec(s"k${random.nextInt(5)}", math.max(0L, base + random.nextInt(12) - 6))) :+
          rec("k9", math.max(0L, base - 8 + random.nextInt(3)))
      } :+ Seq(rec("k0", base + 200))
      val delay = s"$delayMs milliseconds"
      val (early, maxTs, droppedEarly) = run(on = true, windows, delay, steps)
      val (late, _, droppedLate) = run(on = false, windows, delay, steps)
      assert(early.map(_.row).sorted === late.map(_.row).sorted)
      assert(droppedEarly === droppedLate && droppedEarly > 0, "the input has late records")
      val when = late.groupBy(_.row).map { case (r, es) => r -> es.map(_.batch).sorted }
      val sooner = early.groupBy(_.row).toSeq.flatMap { case (r, es) =>
        es.map(_.batch).sorted.zip(when(r)).map { case (e, l) =>
          assert(e <= l, s"$r left in batch $e with the rule, $l without")
          if (e < l) {
            // The output's end is exclusive; the windows close `grace` after their end (inclusive ends: 1 ms more).
            assert(r._3 + grace <= maxTs(e) - delayMs + 1, s"$r left in batch $e, whose largest time is ${maxTs(e)}")
          }
          e < l
        }
      }
      assert(sooner.count(identity) > 0, "some windows close earlier")
    }

  test("a restart between two batches closes nothing twice: the watermark it resumes from covers the horizon") {
    // Without no-data batches no batch is planned with the watermark the first batch moved: only the commit log keeps
    // it (SparkBehaviourProbeSuite pins that a restart resumes from it).
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "false")
    try {
      val checkpoint = tempDir("early-restart")
      val input = stream(1)
      val plan = input.toDF().withWatermark("ts", "0 seconds").transform(counts(
        TimeWindows.ofSizeAndGrace(ms(10), ms(2))
      ))
      val out = new java.util.concurrent.ConcurrentLinkedQueue[(Long, Row)]()
      val first = start(plan, checkpoint, out)
      try { input.addData(rec("a", 0), rec("b", 100)); first.processAllAvailable() }
      finally first.stop()
      val second = start(plan, checkpoint, out)
      try {
        input.addData(rec("a", 5), rec("b", 200))
        second.processAllAvailable()
        assert(second.lastProgress.eventTime.get("watermark") === "1970-01-01T00:00:00.100Z")
      } finally second.stop()
      import scala.jdk.CollectionConverters._
      assert(out.asScala.toSeq.map(e => view(e._2)).filter(_._1 == "a") === Seq(("a", 0L, 10L, 1L)))
    } finally spark.conf.unset("spark.sql.streaming.noDataMicroBatches.enabled")
  }

  test("the rule holds only where every aggregated row passed the query's one watermark node with its time") {
    val input = stream(1).toDF()
    def delay(df: DataFrame, ts: String = "ts"): Option[Long] = EarlyClose.delayMs(df, df.schema.fieldIndex(ts))
    val marked = input.withWatermark("ts", "3 seconds")
    assert(delay(marked) === Some(3000L))
    assert(delay(marked.where(col("user") =!= "x").select(col("user"), col("ts").as("t")), "t") === Some(3000L))
    val static = spark.createDataFrame(
      java.util.Arrays.asList(Row("a", "A")),
      StructType(Seq(StructField("user", StringType), StructField("name", StringType)))
    )
    assert(delay(marked.join(static, "user")) === Some(3000L), "a stream-static join passes stream rows on")
    assert(delay(marked.withColumn("ts", col("ts") + expr("INTERVAL 1 SECOND"))) === None, "a computed time")
    assert(delay(marked.union(stream(1).toDF())) === None, "the union's other rows never passed the node")
    assert(delay(marked.withWatermark("ts", "5 seconds")) === None, "two watermark nodes")
    assert(delay(input.withColumn("t2", col("ts")).withWatermark("t2", "1 second")) === None, "not the marked column")
    withRule(on = false)(assert(delay(marked) === None))
  }
}
