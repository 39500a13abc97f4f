package io.github.sparksuppress.spark

import java.sql.Timestamp
import java.time.Duration

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.functions.count
import org.apache.spark.sql.types._

import io.github.sparksuppress.api._
import io.github.sparksuppress.testing.TestDriver

/**
 * Idle progress (issue 15): with an idle timeout, stream time runs on with the wall clock once the input is quiet, so
 * the last windows close and buffers empty; without one nothing comes out. Real clock: a 200 ms timeout, and event
 * times chosen so that what a first idle period releases needs far less wall time than what the second does.
 */
class IdleProgressSuite extends SparkSessionSuite {
  private def ms(n: Long) = Duration.ofMillis(n)
  private def ts(n: Long) = new Timestamp(n)
  private val Idle = ms(200)

  private val windowedUpdates = StructType(Seq(
    StructField("key", StringType),
    StructField("ts", TimestampType),
    StructField("value", LongType),
    StructField("window", StructType(Seq(StructField("start", TimestampType), StructField("end", TimestampType))))
  ))
  private def update(k: String, t: Long, v: Long, start: Long, end: Long) = Row(k, ts(t), v, Row(ts(start), ts(end)))
  private def keyEnd(rows: Seq[Row]): Seq[(String, Long)] =
    rows.map(r => (r.getString(0), r.getStruct(3).getTimestamp(1).getTime)).sorted

  private def finals(name: String, idle: Option[Duration]): TestDriver = {
    val d = TestDriver(spark, windowedUpdates, "ts")
    val s = Suppress(Seq("key"), "ts", Suppressed.untilWindowCloses(BufferConfig.unbounded()).withName(name))
      .withWindow(WindowColumns.struct("window")).withGrace(ms(0))
    d.start(d.input.transform(idle.map(s.withIdleTimeout).getOrElse(s)))
  }

  private def buffered(d: TestDriver, name: String, metric: String): Double =
    Metrics.forQuery(d.streamingQuery)(name)(metric)

  test(
    "suppress final results: when input stops, the last windows close on the idle clock; a restart mid-idle " +
      "loses and repeats nothing"
  ) {
    val d = finals("idle-finals", Some(Idle))
    try {
      assert(d.step(
        update("a", 100, 1, 0, 1000),
        update("b", 1500, 2, 1000, 2000),
        update("c", 1500, 3, 1000, 5500)
      ) === Nil)
      val first = keyEnd(d.idle(ms(600)))
      assert(first.contains(("a", 1000L)), "closed by the watermark the step moved")
      assert(first.contains(("b", 2000L)), "closed by the idle clock: 1500 + at least 600 ms")
      d.restart() // c needs 4 s of idle time: the restart falls in the middle of it
      // Spark runs no micro-batch after a restart until input arrives: an old update of another key (it moves no
      // stream time, and leaves at once: its window closed long ago) lets the idle period go on.
      val second = keyEnd(d.advance() ++ d.step(update("z", 0, 9, 0, 1)) ++ d.idle(ms(4100)))
      assert(
        (first ++ second).sorted === Seq(("a", 1000L), ("b", 2000L), ("c", 5500L), ("z", 1L)),
        "each final result once"
      )
    } finally d.stop()
  }

  test("suppress: records arriving after an idle period continue from the larger stream time") {
    val d = finals("idle-resume", Some(Idle))
    try {
      assert(d.step(update("b", 1500, 1, 1000, 2000)) === Nil)
      assert(keyEnd(d.idle(ms(600))) === Seq(("b", 2000L)))
      // The watermark is still 1500, but the window's stream time has passed 2000: the update is for a closed window,
      // which Kafka lets out at once (a second result), instead of holding it as if the window were open.
      assert(keyEnd(d.step(update("b", 1900, 2, 1000, 2000))) === Seq(("b", 2000L)))
      assert(
        d.step(update("e", 10000, 3, 10000, 11000)) === Nil,
        "records ahead of the idle clock move stream time again"
      )
    } finally d.stop()
  }

  test("suppress without an idle timeout: nothing comes out while the input is quiet (Kafka's behaviour)") {
    val d = finals("no-idle", None)
    try {
      assert(d.step(update("b", 1500, 2, 1000, 2000)) === Nil)
      assert(d.idle(ms(600)) === Nil)
      assert(buffered(d, "no-idle", "suppression-buffer-count-current") === 1.0)
    } finally d.stop()
  }

  private val events = StructType(Seq(StructField("user", StringType), StructField("ts", TimestampType)))

  /** Hopping windows of 2 s every 1 s, no grace: a record at 1500 is in [0,2000) (closes at 2000) and [1000,3000). */
  private def counts(name: String, idle: Option[Duration]): TestDriver = {
    val d = TestDriver(spark, events, "ts")
    val a = AggregateWindowed(
      Seq("user"),
      "ts",
      TimeWindows.ofSizeAndGrace(ms(2000), ms(0)).advanceBy(ms(1000)),
      Seq(count("*").as("n")),
      EmitStrategy.onWindowClose()
    ).withName(name)
    d.start(d.input.transform(idle.map(a.withIdleTimeout).getOrElse(a)))
  }
  private def userWindow(rows: Seq[Row]): Seq[(String, Long, Long)] =
    rows.map(r => (r.getString(0), r.getStruct(1).getTimestamp(0).getTime, r.getLong(2))).sorted

  test(
    "windowed aggregation onWindowClose: when input stops, the last windows close; a restart mid-idle loses and " +
      "repeats nothing"
  ) {
    val d = counts("idle-counts", Some(Idle))
    try {
      assert(d.step(Row("u", ts(1500)), Row("v", ts(1200))) === Nil)
      val first = userWindow(d.idle(ms(600)))
      assert(first.contains(("u", 0L, 1L)) && first.contains(("v", 0L, 1L)), "[0,2000) closed on the idle clock")
      d.restart() // [1000,3000) needs 1.5 s of idle time
      intercept[IllegalStateException](
        d.idle(ms(1600))
      ) // Spark runs no micro-batch after a restart until input arrives
      // A record of another key behind the watermark (it moves no stream time) lets the idle period go on; its own
      // window [0,2000) is open at the watermark 1500 and closes on its own idle clock.
      val second = userWindow(d.advance() ++ d.step(Row("w", ts(0))) ++ d.idle(ms(1600)))
      assert(
        (first ++ second).sorted === Seq(
          ("u", 0L, 1L),
          ("u", 1000L, 1L),
          ("v", 0L, 1L),
          ("v", 1000L, 1L),
          ("w", 0L, 1L)
        ),
        "each window once"
      )
    } finally d.stop()
  }

  test("windowed aggregation: records arriving after an idle period continue from the larger stream time") {
    val d = TestDriver(spark, events, "ts")
    d.start(d.input.transform(AggregateWindowed(
      Seq("user"),
      "ts",
      TimeWindows.ofSizeWithNoGrace(ms(1000)),
      Seq(count("*").as("n")),
      EmitStrategy.onWindowClose()
    ).withLateRecords(LateRecords.Emit).withIdleTimeout(Idle)))
    def view(rows: Seq[Row]) =
      rows.map(r => (r.getString(0), r.getStruct(1).getTimestamp(0).getTime, r.getLong(2), r.getBoolean(4)))
    try {
      assert(d.step(Row("u", ts(1500))) === Nil)
      assert(view(d.idle(ms(600))) === Seq(("u", 1000L, 1L, false)))
      // The watermark is still 1500, but u's stream time has passed 2000: [1000,2000) stays closed.
      assert(view(d.step(Row("u", ts(1900)))) === Seq(("u", 1000L, 1L, true)))
    } finally d.stop()
  }

  test("windowed aggregation without an idle timeout: nothing comes out while the input is quiet") {
    val d = counts("no-idle-counts", None)
    try {
      assert(d.step(Row("u", ts(1500))) === Nil)
      assert(d.idle(ms(600)) === Nil)
    } finally d.stop()
  }

  private val orders = StructType(Seq(
    StructField("customer", StringType),
    StructField("order_ts", TimestampType),
    StructField("amount", LongType)
  ))
  private val tiers = StructType(Seq(
    StructField("customer", StringType),
    StructField("changed_at", TimestampType),
    StructField("tier", StringType)
  ))

  private def join(name: String, idle: Option[Duration]): TestDriver = {
    val d = TestDriver(spark)
    val o = d.addInput("orders", orders, "order_ts", "0 seconds")
    val t = d.addInput("tiers", tiers, null, null)
    val joined = Joined.left().withGracePeriod(ms(1000)).withName(name)
    d.start(o.transform(StreamTableJoin(
      "customer",
      "order_ts",
      ChangelogTable.versioned(t, "changed_at", ms(60000)),
      idle.map(joined.withIdleTimeout).getOrElse(joined)
    )))
  }
  private def orderTier(rows: Seq[Row]): Seq[(String, Long, String)] =
    rows.map(r => (r.getString(0), r.getTimestamp(1).getTime, r.getString(3))).sorted

  test(
    "join: when the stream stops, records waiting in the grace buffer leave on the idle clock; a restart " +
      "mid-idle loses and repeats nothing"
  ) {
    val d = join("idle-join", Some(Idle))
    try {
      d.stepInput("tiers", Seq(Row("alice", ts(0), "silver"), Row("bob", ts(0), "gold")))
      // Both wait 1 s of stream time; on processing-time timeouts a step that takes longer than the idle timeout
      // and alice's wait (a loaded machine) already runs batches on the idle clock, so its output counts too.
      val waiting = orderTier(d.stepInput("orders", Seq(Row("alice", ts(1500), 1L), Row("bob", ts(3000), 2L))))
      val first = waiting ++ orderTier(d.idle(ms(600)))
      assert(first.contains(("alice", 1500L, "silver")), "1500 + 1000 <= 3000 + at least 600 ms of idle time")
      d.restart() // bob's order needs 1 s of idle time
      // Spark runs no micro-batch after a restart until input arrives: a table write lets the idle period go on.
      val second =
        orderTier(d.advance() ++ d.stepInput("tiers", Seq(Row("carol", ts(0), "bronze"))) ++ d.idle(ms(1100)))
      assert((first ++ second).sorted === Seq(("alice", 1500L, "silver"), ("bob", 3000L, "gold")), "each order once")
    } finally d.stop()
  }

  test("join without an idle timeout: a record waiting in the grace buffer stays while the stream is quiet") {
    val d = join("no-idle-join", None)
    try {
      d.stepInput("tiers", Seq(Row("alice", ts(0), "silver")))
      assert(d.stepInput("orders", Seq(Row("alice", ts(1500), 1L))) === Nil)
      assert(d.idle(ms(600)) === Nil)
    } finally d.stop()
  }

  test("join: an idle timeout needs a watermark on the stream, and the error says how to add one") {
    val d = TestDriver(spark)
    try {
      val o = d.addInput("orders", orders, null, null)
      val t = ChangelogTable.versioned(d.addInput("tiers", tiers, null, null), "changed_at", ms(60000))
      val e = intercept[IllegalArgumentException](o.transform(StreamTableJoin(
        "customer",
        "order_ts",
        t,
        Joined.left().withName("j").withGracePeriod(ms(10)).withIdleTimeout(Idle)
      )))
      assert(
        e.getMessage.contains("join_versioned 'j': an idle timeout moves the release") &&
          e.getMessage.contains("the stream has none") &&
          e.getMessage.contains("""stream.withWatermark("order_ts", "0 seconds")"""),
        e.getMessage
      )
    } finally d.stop()
  }

  test("join: an idle timeout needs a grace period and the release on the watermark, naming the parameter and fix") {
    val d = TestDriver(spark)
    try {
      val o = d.addInput("orders", orders, "order_ts", "0 seconds")
      val t = ChangelogTable.versioned(d.addInput("tiers", tiers, null, null), "changed_at", ms(60000))
      val noGrace = intercept[IllegalArgumentException](
        o.transform(StreamTableJoin("customer", "order_ts", t, Joined.left().withName("j").withIdleTimeout(Idle)))
      )
      assert(
        noGrace.getMessage.contains("stream-table join 'j': idleTimeout = PT0.2S moves the release") &&
          noGrace.getMessage.contains("the join has no grace period"),
        noGrace.getMessage
      )
      val p = intercept[IllegalArgumentException](Spelling.forPython(o.transform(StreamTableJoin(
        "customer",
        "order_ts",
        t,
        Joined.left().withGracePeriod(ms(10)).withoutWatermarkRelease().withIdleTimeout(Idle)
      ))))
      assert(
        p.getMessage.contains("idle_timeout=timedelta(milliseconds=200) moves") &&
          p.getMessage.contains("keep release_on_watermark=True"),
        p.getMessage
      )
    } finally d.stop()
  }

  test("idle timeouts must be positive; a wall-clock time limit refuses one; both name the parameter, value and fix") {
    val s = Suppress("key", "ts", Suppressed.untilTimeLimit(ms(10), BufferConfig.unbounded()))
    assert(intercept[IllegalArgumentException](
      s.withIdleTimeout(ms(0))
    ).getMessage.contains("idleTimeout must be > 0, got PT0S"))
    val python = intercept[IllegalArgumentException](Spelling.forPython(s.withIdleTimeout(ms(-5))))
    assert(python.getMessage.contains("idle_timeout must be > 0, got timedelta(milliseconds=-5)"), python.getMessage)
    val wallClock = Suppress(
      "key",
      "ts",
      Suppressed.untilTimeLimit(ms(10), BufferConfig.unbounded(), SuppressionClock.ProcessingTime).withName("wall")
    )
      .withIdleTimeout(Idle)
    val e = intercept[IllegalArgumentException](wallClock.request)
    assert(
      e.getMessage.contains("suppress 'wall': idleTimeout = PT0.2S has no use with a wall-clock time limit " +
        "(SuppressionClock.ProcessingTime)") && e.getMessage.contains("Drop the idleTimeout argument"),
      e.getMessage
    )
    val p = intercept[IllegalArgumentException](Spelling.forPython(wallClock.request))
    assert(
      p.getMessage.contains("idle_timeout=timedelta(milliseconds=200) has no use") &&
        p.getMessage.contains("clock=\"processing\"") && p.getMessage.contains("Drop the idle_timeout argument"),
      p.getMessage
    )
    assert(intercept[IllegalArgumentException](
      AggregateWindowed(
        Seq("user"),
        "ts",
        TimeWindows.ofSizeWithNoGrace(ms(10)),
        Seq(count("*")),
        EmitStrategy.onWindowClose()
      )
        .withIdleTimeout(Duration.ofNanos(10))
    ).getMessage.contains("idleTimeout must be at least 1 millisecond"))
  }
}
