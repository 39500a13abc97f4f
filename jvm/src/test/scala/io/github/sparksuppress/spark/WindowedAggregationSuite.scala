package io.github.sparksuppress.spark

import java.sql.Timestamp
import java.time.Duration

import org.apache.spark.sql.{Column, DataFrame, Encoders, Row}
import io.github.sparksuppress.shims.StreamingRuntime
import io.github.sparksuppress.shims.StreamingRuntime.MemoryStream
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec
import org.apache.spark.sql.expressions.Aggregator
import org.apache.spark.sql.functions._
import org.apache.spark.sql.streaming.Trigger
import org.apache.spark.sql.types._

import io.github.sparksuppress.api._
import io.github.sparksuppress.spark.window.MapSideParams
import io.github.sparksuppress.testing.TestDriver

/**
 * The windowed aggregation through Spark, one micro-batch per step (TestDriver), for every window type and strategy.
 */
class WindowedAggregationSuite extends SparkSessionSuite {

  private val schema = StructType(Seq(
    StructField("user", StringType),
    StructField("ts", TimestampType),
    StructField("amount", LongType),
    StructField("label", StringType)
  ))

  private def ms(n: Long) = Duration.ofMillis(n)
  private def rec(user: String, t: Long, amount: java.lang.Long = 1L, label: String = "x") =
    Row(user, new Timestamp(t), amount, label)

  private def driver(op: DataFrame => DataFrame): TestDriver = {
    val d = TestDriver(spark, schema, "ts")
    d.start(d.input.transform(op))
  }

  /** (user, window start, window end, the other columns...) of emitted rows, timestamps as epoch ms, by user. */
  private def view(rows: Seq[Row]): Seq[Seq[Any]] = rows.map { r =>
    val w = r.getStruct(1)
    Seq(r.getString(0), w.getTimestamp(0).getTime, w.getTimestamp(1).getTime) ++
      (2 until r.length).map(i => r.get(i) match { case t: Timestamp => t.getTime; case v => v })
  }.sortBy(_.head.toString)

  private def aggregate(windows: Windows, emit: EmitStrategy, aggregations: Column*): AggregateWindowed =
    AggregateWindowed(Seq("user"), "ts", windows, aggregations, emit)

  private def fold: Column = StringFold.column(col("label"), "0", "+").as("trace")

  test("tumbling windows, onWindowClose: one final row per key and window, once end + grace <= stream time") {
    val d = driver(_.transform(aggregate(
      TimeWindows.ofSizeAndGrace(ms(10), ms(5)),
      EmitStrategy.onWindowClose(),
      count("*").as("n"),
      sum("amount").as("total")
    )))
    try {
      assert(d.step(rec("a", 1, 2), rec("a", 4, 3), rec("b", 9, 1)) === Nil)
      assert(d.step(rec("a", 12)) === Nil)
      assert(view(d.step(rec("c", 15))) === Seq(Seq("a", 0L, 10L, 2L, 5L, 4L), Seq("b", 0L, 10L, 1L, 1L, 9L)))
      assert(d.step(rec("a", 3, 100)) === Nil, "a record for a closed window is dropped")
      assert(view(d.step(rec("z", 40))) === Seq(Seq("a", 10L, 20L, 1L, 1L, 12L), Seq("c", 10L, 20L, 1L, 1L, 15L)))
      assert(Metrics.forQuery(d.streamingQuery).head._2("dropped-records-total") === 1.0)
    } finally d.stop()
  }

  test("Latest.column keeps the latest arrival (Kafka's reduce), where last keeps the latest event time") {
    val d = driver(_.transform(aggregate(
      TimeWindows.ofSizeAndGrace(ms(100), ms(1000)),
      EmitStrategy.onWindowUpdate(),
      Latest.column(col("label")).as("latest"),
      last("label").as("last"),
      Latest.column(col("label"), col("amount")).as("byAmount")
    )))
    try {
      assert(view(d.step(rec("a", 50, 5L, "first"))) === Seq(Seq("a", 0L, 100L, "first", "first", "first", 50L)))
      // Later micro-batch, earlier event time, smaller order: still the latest to arrive.
      assert(view(d.step(rec("a", 10, 1L, "second"))) === Seq(Seq("a", 0L, 100L, "second", "first", "second", 50L)))
      // One micro-batch: the greatest order wins for byAmount; without an order, the later record of the batch.
      val batch = view(d.step(rec("a", 20, 9L, "nine"), rec("a", 30, 3L, "three")))
      assert(batch.last === Seq("a", 0L, 100L, "three", "first", "nine", 50L))
    } finally d.stop()
    val e = intercept[IllegalArgumentException](Latest.column(col("label"), null))
    assert(e.getMessage.contains("orderBy must be a column"))
  }

  test("hopping windows, onWindowUpdate: every window containing a record is updated, in start order") {
    val d = driver(_.transform(aggregate(
      TimeWindows.ofSizeAndGrace(ms(10), ms(100)).advanceBy(ms(5)),
      EmitStrategy.onWindowUpdate(),
      fold
    )))
    try {
      assert(view(d.step(rec("a", 3, label = "p"))) === Seq(Seq("a", 0L, 10L, "0+p", 3L)), "starts are never negative")
      assert(d.step(rec("a", 7, label = "q")).map(r => (r.getStruct(1).getTimestamp(0).getTime, r.getString(2))) ===
        Seq((0L, "0+p+q"), (5L, "0+q")))
      assert(
        d.step(rec("a", 2, label = "r")).map(r =>
          (r.getStruct(1).getTimestamp(0).getTime, r.getString(2), r.getTimestamp(3).getTime)
        ) ===
          Seq((0L, "0+p+q+r", 7L)),
        "an out-of-order record keeps the window's largest timestamp"
      )
    } finally d.stop()
  }

  test("grace 0: a time window closes exactly at its end; the next record at the end belongs to the next window") {
    val d = driver(_.transform(aggregate(
      TimeWindows.ofSizeWithNoGrace(ms(500)),
      EmitStrategy.onWindowClose(),
      count("*").as("n")
    )))
    try {
      assert(d.step(rec("1", 10)) === Nil)
      assert(d.step(rec("1", 15)) === Nil)
      assert(view(d.step(rec("1", 500))) === Seq(Seq("1", 0L, 500L, 2L, 15L)))
      assert(d.step(rec("2", 550), rec("2", 499)) === Nil, "499 is late: [0,500) closed at 500")
      assert(view(d.step(rec("2", 1000))) === Seq(Seq("1", 500L, 1000L, 1L, 500L), Seq("2", 500L, 1000L, 1L, 550L)))
    } finally d.stop()
  }

  test("the rows shuffled to a per-key aggregation carry each key column once") {
    // Grouping by an alias of a column makes Spark append it to every row it shuffles, next to the column itself.
    val d = driver(_.transform(aggregate(
      TimeWindows.ofSizeAndGrace(ms(10), ms(5)),
      EmitStrategy.onWindowClose(),
      count("*").as("n")
    )))
    try {
      d.step(rec("a", 1))
      val execution = d.streamingQuery match { case w: StreamingRuntime.StreamingQueryWrapper => w.streamingQuery }
      // The shuffle under the state operator's input (Spark 3.5's plan has others, of other rows).
      val plan = execution.lastExecution.executedPlan
      val stateful = plan.collect { case s if s.nodeName == "FlatMapGroupsWithState" => s }
      assert(stateful.size === 1, plan)
      val shuffled = stateful.head.children.head.collectFirst { case e: ShuffleExchangeExec => e.child.output }
      assert(shuffled.isDefined, s"no shuffle before the state operator: ${stateful.head}")
      assert(shuffled.get.count(_.name == "user") === 1, shuffled.get.mkString(", "))
    } finally d.stop()
  }

  test(
    "pre-combined records of one micro-batch are dropped exactly as record by record: by the key's own earlier records"
  ) {
    val d = driver(_.transform(aggregate(
      TimeWindows.ofSizeAndGrace(ms(10), ms(0)),
      EmitStrategy.onWindowClose(),
      count("*").as("n"),
      min("amount").as("lo"),
      max("amount").as("hi"),
      first("amount").as("first"),
      last("amount").as("last")
    )))
    try {
      // For a: 3 arrives before 25 and counts; 4 and 5 arrive after 25 closed [0,10) and are dropped.
      // b's records are not late for b (Kafka's per-task time is per key here): b@2 counts.
      // The step ends with the watermark at 25, which closes both [0,10) windows.
      val out = view(d.step(rec("a", 3, 30), rec("a", 25, 7), rec("a", 4, 1), rec("b", 2, 5), rec("a", 5, 9)))
      assert(out === Seq(Seq("a", 0L, 10L, 1L, 30L, 30L, 30L, 30L, 3L), Seq("b", 0L, 10L, 1L, 5L, 5L, 5L, 5L, 2L)))
      assert(view(d.step(rec("c", 30))) === Seq(Seq("a", 20L, 30L, 1L, 7L, 7L, 7L, 7L, 25L)))
      assert(Metrics.forQuery(d.streamingQuery).head._2("dropped-records-total") === 2.0)
    } finally d.stop()
  }

  test("session windows, onWindowUpdate: merges retract the absorbed sessions before the merged one") {
    val d = driver(_.transform(aggregate(
      SessionWindows.ofInactivityGapAndGrace(ms(10), ms(0)),
      EmitStrategy.onWindowUpdate(),
      count("*").as("n")
    )))
    try {
      // window.end is exclusive, as session_window gives it: last record + gap.
      assert(view(d.step(rec("a", 0))) === Seq(Seq("a", 0L, 10L, 1L, 0L, false)))
      assert(view(d.step(rec("b", 11))) === Seq(Seq("b", 11L, 21L, 1L, 11L, false)))
      // At stream time 11 a's [0,0] is closed (0 + 10 + 0 < 11): 5 starts a new session instead of merging.
      assert(view(d.step(rec("a", 5))) === Seq(Seq("a", 5L, 15L, 1L, 5L, false)))
      val merged = d.step(rec("a", 12), rec("a", 20))
      assert(
        merged.map(r =>
          (
            r.getStruct(1).getTimestamp(0).getTime,
            r.getStruct(1).getTimestamp(1).getTime,
            r.getLong(2),
            r.getBoolean(4)
          )
        ) ===
          Seq((5L, 15L, 1L, true), (5L, 22L, 2L, false), (5L, 22L, 2L, true), (5L, 30L, 3L, false)),
        "each record of the batch merges in turn: [5,5] into [5,12], then [5,12] into [5,20]"
      )
    } finally d.stop()
  }

  test(
    "session windows, onWindowClose: final sessions ordered by end, with Kafka's merge order for typed aggregators"
  ) {
    val d = driver(_.transform(aggregate(
      SessionWindows.ofInactivityGapAndGrace(ms(500), ms(0)),
      EmitStrategy.onWindowClose(),
      count("*").as("n"),
      fold
    )))
    try {
      assert(d.step(rec("1", 10, label = "1")) === Nil)
      assert(d.step(rec("1", 15, label = "2")) === Nil)
      // Stream time 600 closes [10,15]: 15 + 500 + 0 < 600.
      assert(view(d.step(rec("1", 600, label = "3"))) === Seq(Seq("1", 10L, 515L, 2L, "0+0+1+2", 15L)))
      assert(view(d.step(rec("2", 1200, label = "x"))) === Seq(Seq("1", 600L, 1100L, 1L, "0+3", 600L)))
    } finally d.stop()
  }

  test("sliding windows in both strategies: windows around records, inclusive bounds (end exclusive in the output)") {
    val sliding = SlidingWindows.ofTimeDifferenceAndGrace(ms(10), ms(0))
    val u = driver(_.transform(aggregate(sliding, EmitStrategy.onWindowUpdate(), count("*").as("n"))))
    try {
      assert(view(u.step(rec("a", 10))) === Seq(Seq("a", 0L, 11L, 1L, 10L)))
      assert(u.step(rec("a", 15)).map(r => (r.getStruct(1).getTimestamp(0).getTime, r.getLong(2))) === Seq(
        (11L, 1L),
        (5L, 2L)
      ))
    } finally u.stop()
    val c = driver(_.transform(aggregate(sliding, EmitStrategy.onWindowClose(), count("*").as("n"))))
    try {
      assert(c.step(rec("a", 10)) === Nil)
      assert(view(c.step(rec("a", 15))) === Seq(Seq("a", 0L, 11L, 1L, 10L)), "[0,10] closes once 10 < 15 - 0")
      assert(view(c.step(rec("b", 16))).filter(_.head == "a") === Seq(Seq("a", 5L, 16L, 2L, 15L)))
      assert(view(c.step(rec("b", 40))).filter(_.head == "a") === Seq(Seq("a", 11L, 22L, 1L, 15L)))
    } finally c.stop()
  }

  test("a restart from the checkpoint keeps open windows: nothing is emitted twice or lost") {
    val op = aggregate(
      TimeWindows.ofSizeAndGrace(ms(10), ms(0)).advanceBy(ms(5)),
      EmitStrategy.onWindowClose(),
      count("*").as("n"),
      fold
    ).withName("durable")
    val d = driver(_.transform(op))
    try {
      assert(d.step(rec("a", 1, label = "p"), rec("b", 6, label = "q")) === Nil)
      assert(view(d.step(rec("a", 10, label = "r"))) === Seq(
        Seq("a", 0L, 10L, 1L, "0+p", 1L),
        Seq("b", 0L, 10L, 1L, "0+q", 6L)
      ))
      d.restart()
      assert(d.advance() === Nil)
      assert(view(d.step(rec("a", 12, label = "s"))) === Nil)
      assert(view(d.step(rec("c", 30))) === Seq(
        Seq("a", 5L, 15L, 2L, "0+r+s", 12L),
        Seq("a", 10L, 20L, 2L, "0+r+s", 12L),
        Seq("b", 5L, 15L, 1L, "0+q", 6L)
      ))
    } finally d.stop()
  }

  test(
    "LateRecords.Emit: a record dropped for a closed window leaves flagged, once per closed window, also after " +
      "a restart"
  ) {
    def run(late: LateRecords)(body: TestDriver => Unit): Unit = {
      val d = driver(_.transform(aggregate(
        TimeWindows.ofSizeAndGrace(ms(10), ms(0)).advanceBy(ms(5)),
        EmitStrategy.onWindowClose(),
        count("*").as("n"),
        sum("amount").as("total")
      ).withName(s"late-${late.name}").withLateRecords(late)))
      try body(d)
      finally d.stop()
    }
    run(LateRecords.Drop) { d =>
      assert(view(d.step(rec("a", 1, 2))) === Nil)
      assert(view(d.step(rec("a", 12, 3))) === Seq(Seq("a", 0L, 10L, 1L, 2L, 1L)))
      assert(view(d.step(rec("a", 8, 100))) === Nil, "[0,10) closed: dropped there; [5,15) takes it")
      assert(Metrics.forQuery(d.streamingQuery)("late-drop")("dropped-records-total") === 1.0)
      assert(view(d.step(rec("z", 30))).filter(_.head == "a") ===
        Seq(Seq("a", 5L, 15L, 2L, 103L, 12L), Seq("a", 10L, 20L, 1L, 3L, 12L)))
    }
    run(LateRecords.Emit) { d =>
      assert(view(d.step(rec("a", 1, 2))) === Nil)
      assert(view(d.step(rec("a", 12, 3))) === Seq(Seq("a", 0L, 10L, 1L, 2L, 1L, false)))
      assert(
        view(d.step(rec("a", 8, 100))) === Seq(Seq("a", 0L, 10L, 1L, 100L, 8L, true)),
        "one row for the window it missed, aggregating that record alone; [5,15) takes it"
      )
      assert(Metrics.forQuery(d.streamingQuery)("late-emit")("dropped-records-total") === 1.0)
      d.restart()
      assert(d.advance() === Nil, "the late row is not emitted again")
      assert(
        view(d.step(rec("a", 2, 7))) === Seq(Seq("a", 0L, 10L, 1L, 7L, 2L, true)),
        "only [0,10) holds 2 (starts are never negative)"
      )
      assert(view(d.step(rec("z", 30))).filter(_.head == "a") ===
        Seq(Seq("a", 5L, 15L, 2L, 103L, 12L, false), Seq("a", 10L, 20L, 1L, 3L, 12L, false)))
    }
  }

  test("LateRecords.Emit for sessions and sliding windows: the record's own session; a sliding record's left window") {
    val sessions = driver(_.transform(aggregate(
      SessionWindows.ofInactivityGapAndGrace(ms(10), ms(0)),
      EmitStrategy.onWindowUpdate(),
      count("*").as("n")
    ).withLateRecords(LateRecords.Emit)))
    try {
      assert(view(sessions.step(rec("a", 100))) === Seq(Seq("a", 100L, 110L, 1L, 100L, false, false)))
      assert(view(sessions.step(rec("a", 104))) === Seq(
        Seq("a", 100L, 110L, 1L, 100L, true, false),
        Seq("a", 100L, 114L, 2L, 104L, false, false)
      ))
      sessions.step(rec("b", 200))
      assert(
        view(sessions.step(rec("a", 110))) === Seq(Seq("a", 110L, 120L, 1L, 110L, false, true)),
        "[100,104] closed at the watermark 200 and left the state: the record's own session is what it missed"
      )
    } finally sessions.stop()
    val sliding = driver(_.transform(aggregate(
      SlidingWindows.ofTimeDifferenceAndGrace(ms(10), ms(0)),
      EmitStrategy.onWindowClose(),
      count("*").as("n")
    ).withLateRecords(LateRecords.Emit)))
    try {
      sliding.step(rec("a", 50))
      assert(view(sliding.step(rec("a", 100))) === Seq(Seq("a", 40L, 51L, 1L, 50L, false)))
      assert(view(sliding.step(rec("a", 30))) === Seq(Seq("a", 20L, 31L, 1L, 30L, true)))
    } finally sliding.stop()
  }

  test("sessions survive a restart too, merging with what was stored") {
    val op = aggregate(
      SessionWindows.ofInactivityGapAndGrace(ms(10), ms(5)),
      EmitStrategy.onWindowUpdate(),
      count("*").as("n")
    )
    val d = driver(_.transform(op))
    try {
      d.step(rec("a", 100))
      d.restart()
      val out = d.step(rec("a", 105))
      assert(out.map(r =>
        (r.getStruct(1).getTimestamp(0).getTime, r.getStruct(1).getTimestamp(1).getTime, r.getLong(2), r.getBoolean(4))
      ) ===
        Seq((100L, 110L, 1L, true), (100L, 115L, 2L, false)))
    } finally d.stop()
  }

  test("built-in aggregates keep Spark's result types; first and last follow event time") {
    val d = driver(_.transform(aggregate(
      TimeWindows.ofSizeWithNoGrace(ms(100)),
      EmitStrategy.onWindowClose(),
      count("label").as("labelled"),
      sum(col("amount") * 2).as("doubled"),
      avg("amount").as("mean"),
      sum(col("amount").cast("decimal(10,2)")).as("exact"),
      min("label").as("lo"),
      max("label").as("hi"),
      first("label").as("earliest"),
      last("label", ignoreNulls = true).as("latest")
    )))
    try {
      d.step(rec("a", 50, 1, "m"), rec("a", 20, 2, "z"), rec("a", 70, 3, null))
      val out = d.step(rec("b", 100))
      val schemaOut = d.outputSchema
      assert(schemaOut("doubled").dataType === LongType && schemaOut("mean").dataType === DoubleType)
      assert(schemaOut("exact").dataType === DecimalType(20, 2) && schemaOut("ts").dataType === TimestampType)
      val a = out.find(_.getString(0) == "a").get
      assert(a.getLong(2) === 2L && a.getLong(3) === 12L && a.getDouble(4) === 2.0)
      assert(a.getDecimal(5) === new java.math.BigDecimal("6.00"))
      assert(
        (a.getString(6), a.getString(7), a.getString(8), a.getString(9)) === (("m", "z", "z", "m")),
        "first = the earliest event (20: z); last ignoring nulls = the latest non-null (50: m)"
      )
      assert(a.getTimestamp(10).getTime === 70L)
    } finally d.stop()
  }

  test("a custom typed Aggregator with a struct buffer is applied record by record") {
    val d = driver(_.transform(aggregate(
      TimeWindows.ofSizeWithNoGrace(ms(10)),
      EmitStrategy.onWindowUpdate(),
      udaf(SpreadAggregator, Encoders.scalaLong)(col("amount")).as("spread")
    )))
    try {
      assert(view(d.step(rec("a", 1, 5))).map(_(3)) === Seq(0L))
      assert(view(d.step(rec("a", 2, 9))).map(_(3)) === Seq(4L))
      assert(view(d.step(rec("a", 3, 2))).map(_(3)) === Seq(7L))
    } finally d.stop()
  }

  test("records without a key or event time are dropped and counted; lateness is measured per record") {
    val d = driver(_.transform(aggregate(
      TimeWindows.ofSizeWithNoGrace(ms(10)),
      EmitStrategy.onWindowClose(),
      count("*").as("n")
    ).withName("lateness")))
    try {
      d.step(rec("a", 100))
      d.step(Row(null, new Timestamp(50), 1L, "x"), Row("a", null, 1L, "x"))
      d.step(rec("a", 40))
      val m = Metrics.forQuery(d.streamingQuery)("lateness")
      assert(m("dropped-records-total") === 3.0, "null key, null event time, and the late record at 40")
      assert(m("record-lateness-max") === 60.0)
      assert(m("record-lateness-avg") === (0 + 50 + 60) / 3.0, "records with an event time: 100, 50, 40")
      assert(m("window-aggregate-final-emit-total") === 0.0)
      d.step(rec("b", 200))
      val after = Metrics.forQuery(d.streamingQuery)("lateness")
      assert(after("window-aggregate-final-emit-total") === 1.0)
      assert(after("window-aggregate-final-emit-latency-max") >= 0.0 && after(
        "window-aggregate-final-emit-latency-max"
      ) < 60000.0)
    } finally d.stop()
  }

  // Default: every partition combines all its records. 1 and 3: partitions stop combining after 1 or 3 records (their
  // keys are mostly distinct by then) and pass the rest on, after the partials of the records before.
  for (combineCheck <- Seq(None, Some(1), Some(3)))
    test(
      s"several input partitions: pre-combined partials give exactly what record-by-record processing gives " +
        s"(combining checked after ${combineCheck.getOrElse("the default")} records)"
    ) {
      def run(aggregation: Column): (Seq[(String, Long, Long)], Double) = {
        combineCheck.foreach(n => spark.conf.set(MapSideParams.CombineCheckConf, n.toString))
        val stream = MemoryStream[Row](3)(Encoders.row(schema), spark.sqlContext)
        val input = stream.toDF().withWatermark("ts", "0 seconds")
        val op = aggregate(
          TimeWindows.ofSizeAndGrace(ms(10), ms(2)).advanceBy(ms(5)),
          EmitStrategy.onWindowClose(),
          aggregation
        )
        val plan =
          try input.transform(op)
          finally spark.conf.unset(MapSideParams.CombineCheckConf)
        val rows = new java.util.concurrent.ConcurrentLinkedQueue[Row]()
        val q = plan.writeStream.trigger(Trigger.ProcessingTime(0L))
          .option("checkpointLocation", tempDir("partitions"))
          .foreachBatch { (b: DataFrame, _: Long) => b.collect().foreach(rows.add); () }.start()
        try {
          stream.addData((0 until 30).map(i => rec(if (i % 2 == 0) "a" else "b", (i * 37) % 50, label = s"v$i")))
          q.processAllAvailable()
          stream.addData(Seq(rec("c", 100)))
          q.processAllAvailable()
          val dropped = Metrics.forQuery(q).head._2("dropped-records-total")
          import scala.jdk.CollectionConverters._
          (
            rows.asScala.toSeq.map(r =>
              (
                r.getString(0),
                r.getStruct(1).getTimestamp(0).getTime,
                r.get(2) match {
                  case n: Long => n
                  case s: String => s.count(_ == '+').toLong
                }
              )
            ).sorted,
            dropped
          )
        } finally q.stop()
      }
      val combined = run(count("*").as("n"))
      val recordByRecord = run(StringFold.column(col("label"), "", "+").as("n"))
      assert(combined === recordByRecord)
      assert(combined._1.nonEmpty && combined._2 > 0, "the input has late records within the batch")
    }

  test("several key columns (a partly null key is a key) and TIMESTAMP_NTZ event time") {
    // Spark puts watermarks on TIMESTAMP columns only: here it is on `wm`, which carries the same instants as `at`.
    val ntz = StructType(Seq(
      StructField("user", StringType),
      StructField("device", IntegerType),
      StructField("at", TimestampNTZType),
      StructField("wm", TimestampType),
      StructField("amount", LongType)
    ))
    val d = TestDriver(spark, ntz, "wm")
    def at(ms: Long) =
      java.time.LocalDateTime.ofEpochSecond(ms / 1000, (ms % 1000).toInt * 1000000, java.time.ZoneOffset.UTC)
    def row(user: String, device: Integer, ms: Long, amount: Long) =
      Row(user, device, at(ms), new Timestamp(ms), amount)
    d.start(d.input.transform(AggregateWindowed(
      Seq("user", "device"),
      "at",
      TimeWindows.ofSizeWithNoGrace(Duration.ofSeconds(10)),
      Seq(sum("amount").as("total")),
      EmitStrategy.onWindowClose()
    ).withName("two-keys")))
    try {
      d.step(row("a", 1, 1000, 5L), row("a", null, 2000, 7L), row("a", 1, 3000, 1L), row(null, null, 4000, 9L))
      val out = d.step(row("b", 2, 10000, 1L))
      assert(d.outputSchema("window").dataType === StructType(Seq(
        StructField("start", TimestampNTZType),
        StructField("end", TimestampNTZType)
      )))
      assert(out.map(r => (r.getString(0), Option(r.get(1)), r.getStruct(2).get(1), r.getLong(3), r.get(4))).sortBy(
        _._2.toString
      ) ===
        Seq(("a", None, at(10000), 7L, at(2000)), ("a", Some(1), at(10000), 6L, at(3000))))
      assert(Metrics.forQuery(d.streamingQuery)("two-keys")("dropped-records-total") === 1.0, "the all-null key")
    } finally d.stop()
  }

  test("every invalid configuration is rejected when the operator is built, naming the parameter and the fix") {
    def message(body: => Any): String = intercept[IllegalArgumentException](body).getMessage
    assert(message(TimeWindows.ofSizeAndGrace(ms(0), ms(1))).contains("TimeWindows size must be > 0, got PT0S"))
    assert(message(TimeWindows.ofSizeAndGrace(ms(10), ms(-1))).contains("TimeWindows grace must be >= 0"))
    assert(message(TimeWindows.ofSizeWithNoGrace(ms(10)).advanceBy(ms(0))).contains("advance must be > 0"))
    assert(message(
      TimeWindows.ofSizeWithNoGrace(ms(10)).advanceBy(ms(11))
    ).contains("advance must be > 0 and <= the window size (PT0.01S)"))
    assert(message(TimeWindows.ofSizeWithNoGrace(null)).contains("TimeWindows size must not be null"))
    assert(message(SlidingWindows.ofTimeDifferenceAndGrace(
      ms(-1),
      ms(0)
    )).contains("SlidingWindows timeDifference must be >= 0"))
    assert(message(SlidingWindows.ofTimeDifferenceAndGrace(
      ms(5),
      ms(-5)
    )).contains("SlidingWindows grace must be >= 0"))
    assert(message(SessionWindows.ofInactivityGapAndGrace(
      ms(0),
      ms(0)
    )).contains("SessionWindows inactivityGap must be > 0"))
    assert(
      message(SessionWindows.ofInactivityGapWithNoGrace(ms(-3))).contains("SessionWindows inactivityGap must be > 0")
    )
    assert(message(SessionWindows.ofInactivityGapAndGrace(ms(3), ms(-1))).contains("SessionWindows grace must be >= 0"))
    assert(message(StringFold.column(col("label"), null, "+")).contains("initial and separator must not be null"))
    assert(message(aggregate(
      TimeWindows.ofSizeWithNoGrace(ms(10)),
      EmitStrategy.onWindowClose()
    ).withName(" ")).contains("name must be a non-empty string"))

    val d = TestDriver(spark, schema, "ts")
    val in = d.input
    val tumbling = TimeWindows.ofSizeWithNoGrace(ms(10))
    val close = EmitStrategy.onWindowClose()
    def build(op: AggregateWindowed): String = message(in.transform(op))
    assert(build(aggregate(tumbling, close)).contains("aggregations must list at least one aggregate column"))
    val unsupported = build(aggregate(tumbling, close, collect_list("label").as("all")))
    assert(
      unsupported.contains("aggregation 'all' (collect_list) is not supported; supported: count, sum, min, max, avg"),
      unsupported
    )
    assert(build(aggregate(tumbling, close, count_distinct(col("label")).as("d"))).contains("DISTINCT"))
    val missing = build(aggregate(tumbling, close, sum("price").as("p")))
    assert(
      missing.contains(
        "the aggregations cannot be resolved against the input (columns ['user', 'ts', 'amount', 'label'])"
      ) &&
        missing.contains("price"),
      missing
    )
    // A bare column is not an aggregate: Spark's own message asks for a GROUP BY, so ours says what to pass.
    val bare = build(aggregate(tumbling, close, col("amount").as("a")))
    assert(
      bare.contains("the aggregations cannot be resolved") &&
        bare.contains("Each aggregation is one aggregate function call") && bare.contains("supported: count, sum"),
      bare
    )
    assert(build(aggregate(
      tumbling,
      close,
      (sum("amount") + 1).as("s")
    )).contains("not a single aggregate function call"))
    assert(build(aggregate(
      tumbling,
      close,
      avg(lit(Duration.ofSeconds(1))).as("s")
    )).contains("avg supports numeric and decimal inputs"))
    assert(build(aggregate(tumbling, close, max(array(col("label"))).as("m"))).contains("min and max support"))
    assert(build(aggregate(
      null,
      close,
      count("*")
    )).contains("windows must be TimeWindows, SlidingWindows or SessionWindows"))
    assert(build(aggregate(tumbling, null, count("*"))).contains("emit must be EmitStrategy.onWindowClose()"))
    assert(build(AggregateWindowed(
      Seq("nobody"),
      "ts",
      tumbling,
      Seq(count("*")),
      close
    )).contains("key 'nobody' is not a column"))
    assert(build(AggregateWindowed(
      Seq("user"),
      "amount",
      tumbling,
      Seq(count("*")),
      close
    )).contains("timestamp column 'amount' must be a timestamp"))
    assert(build(AggregateWindowed(
      Seq("user"),
      "when",
      tumbling,
      Seq(count("*")),
      close
    )).contains("timestamp 'when' is not a column"))
    assert(build(AggregateWindowed(
      Seq(),
      "ts",
      tumbling,
      Seq(count("*")),
      close
    )).contains("key must name at least one column"))
    assert(build(AggregateWindowed(
      Seq("user", "USER"),
      "ts",
      tumbling,
      Seq(count("*")),
      close
    )).contains("key lists 'user' more than once"))
    assert(build(aggregate(tumbling, close, expr("count(*) FILTER (WHERE amount > 1)").as("f"))).contains("FILTER"))
    assert(build(AggregateWindowed(
      Seq("ts"),
      "ts",
      tumbling,
      Seq(count("*")),
      close
    )).contains("is also the event-time column"))
    assert(build(aggregate(tumbling, close, count("*").as("user"))).contains("two columns named 'user'"))
    assert(build(aggregate(
      SessionWindows.ofInactivityGapWithNoGrace(ms(5)),
      EmitStrategy.onWindowUpdate(),
      count("*").as("retraction")
    ))
      .contains("two columns named 'retraction'"))
    val raw = MemoryStream[Row](Encoders.row(schema), spark.sqlContext).toDF()
    assert(message(raw.transform(aggregate(tumbling, close, count("*")))).contains("has no event-time watermark"))
    assert(message(in.withColumnRenamed(
      "label",
      "__spark_suppress_label"
    ).transform(aggregate(tumbling, close, count("*"))))
      .contains("names starting with '__spark_suppress_' are reserved"))
    val batch = spark.createDataFrame(java.util.List.of[Row](), schema)
    assert(message(batch.transform(aggregate(tumbling, close, count("*")))).contains("is not a streaming DataFrame"))
  }
}

/** Largest minus smallest value seen: a typed Aggregator with a struct buffer. */
object SpreadAggregator extends Aggregator[Long, (Long, Long), Long] {
  def zero: (Long, Long) = (Long.MaxValue, Long.MinValue)
  def reduce(b: (Long, Long), v: Long): (Long, Long) = (math.min(b._1, v), math.max(b._2, v))
  def merge(a: (Long, Long), b: (Long, Long)): (Long, Long) = (math.min(a._1, b._1), math.max(a._2, b._2))
  def finish(b: (Long, Long)): Long = b._2 - b._1
  def bufferEncoder = Encoders.tuple(Encoders.scalaLong, Encoders.scalaLong)
  def outputEncoder = Encoders.scalaLong
}
