package io.github.sparksuppress.spark.chain

import java.sql.Timestamp
import java.time.Duration

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.functions.{col, count}
import org.apache.spark.sql.types._

import io.github.sparksuppress.api._
import io.github.sparksuppress.spark.SparkSessionSuite
import io.github.sparksuppress.testing.TestDriver

/**
 * Options beyond Kafka inside a chain. Late records emitted by the chain's first operator and by a later one, and
 * refused before a `where` or `select` they would pass by. On the wall clock: an idle timeout on the chain's first,
 * middle and last operator, on a join starting a chain, and a wall-clock suppress. Each node runs on its own clock as
 * the stand-alone operator does (`IdleProgressSuite`), with the shard as the group; what a node releases on it flows
 * down the chain at once.
 *
 * Expected outputs follow from the rules: with a 200 ms idle timeout, a node whose stream time stood at t for d >=
 * 200 ms of wall time runs at t + d; tumbling 1 s windows without grace close when stream time reaches their end; a
 * record at 900 is in [0, 1000), which closes after at least 100 ms of idle time, so any idle period closes it.
 * Without the option, nothing comes out while the input is quiet (Kafka's behaviour), which each test checks too.
 */
class ChainOptionsSuite extends SparkSessionSuite {
  override protected def extraConf: Map[String, String] = Map("spark.sql.shuffle.partitions" -> "1")

  private def ms(n: Long) = Duration.ofMillis(n)
  private def ts(n: Long) = new Timestamp(n)
  private val Idle = ms(200)

  private val events = StructType(Seq(StructField("user", StringType), StructField("ts", TimestampType)))

  private def counts(mode: EmitStrategy, idle: Option[Duration] = None): DataFrame => DataFrame = {
    val a = AggregateWindowed(Seq("user"), "ts", TimeWindows.ofSizeWithNoGrace(ms(1000)), Seq(count("*").as("n")), mode)
      .withName("counts")
    idle.map(a.withIdleTimeout).getOrElse(a)
  }

  private def finals(name: String, idle: Option[Duration] = None): DataFrame => DataFrame = {
    val s = Suppress(Seq("user"), "ts", Suppressed.untilWindowCloses(BufferConfig.unbounded()).withName(name))
    idle.map(s.withIdleTimeout).getOrElse(s)
  }

  /** A suppress that lets every update out as soon as its own node's stream time reaches it. */
  private def passOn(name: String): DataFrame => DataFrame =
    Suppress(Seq("user"), "ts", Suppressed.untilTimeLimit(ms(0), BufferConfig.unbounded()).withName(name))

  private def driver(pipeline: DataFrame => DataFrame): TestDriver = {
    val d = TestDriver(spark, events, "ts")
    d.start(pipeline(d.input))
  }

  /** (user, window start, count) of each row. */
  private def windows(rows: Seq[Row]): Seq[(String, Long, Long)] =
    rows.map(r => (r.getString(0), r.getStruct(1).getTimestamp(0).getTime, r.getLong(2))).sorted

  test("a chain started by a windowed aggregation reads its input by the aggregation's rules, TIMESTAMP_NTZ too") {
    // The aggregation's documented rules (docs/reliability.md): all key columns null, a null event time and one before
    // 1970 drop the record, counted; a partly null composite key is a key. Its output times follow its input's kind.
    // Spark puts watermarks on TIMESTAMP columns only: here it is on `wm`, which carries the same instants as `at`.
    val ntz = StructType(Seq(
      StructField("user", StringType),
      StructField("device", IntegerType),
      StructField("at", TimestampNTZType),
      StructField("wm", TimestampType)
    ))
    def at(ms: Long) = java.time.LocalDateTime.ofEpochSecond(Math.floorDiv(ms, 1000L), 0, java.time.ZoneOffset.UTC)
    def row(user: String, device: Integer, ms: java.lang.Long) =
      Row(user, device, if (ms == null) null else at(ms), if (ms == null) ts(0) else ts(ms))
    val d = TestDriver(spark, ntz, "wm")
    val aggregate = AggregateWindowed(
      Seq("user", "device"),
      "at",
      TimeWindows.ofSizeWithNoGrace(ms(10000)),
      Seq(count("*").as("n")),
      EmitStrategy.onWindowUpdate()
    ).withName("two-keys")
    val finals = Suppress(Seq("user", "device"), "at", Suppressed.untilWindowCloses(BufferConfig.unbounded()))
    d.start(d.input.transform(aggregate).transform(finals))
    try {
      d.step(row("a", 1, 1000L), row("a", null, 2000L), row(null, null, 3000L), row("a", 1, null), row("a", 1, -5000L))
      val out = d.step(row("b", 2, 10000L))
      assert(d.outputSchema("at").dataType === TimestampNTZType)
      assert(out.map(r => (r.getString(0), Option(r.get(1)), r.getStruct(2).get(0), r.getLong(3), r.get(4)))
        .sortBy(_._2.toString) === Seq(("a", None, at(0), 1L, at(2000)), ("a", Some(1), at(0), 1L, at(1000))))
      assert(
        Metrics.forQuery(d.streamingQuery)("two-keys")("dropped-records-total") === 3.0,
        "the all-null key, the null event time and the one before 1970"
      )
    } finally d.stop()
  }

  test("an idle timeout on the chain's first operator: its windows close on the idle clock and flow down") {
    // aggregate_windowed (onWindowClose, idle) -> suppress(untilTimeLimit 0): the final count leaves the aggregation
    // on its idle clock; the suppress's own stream time is the count's timestamp, which lets it out at once.
    def run(idle: Option[Duration]) = {
      val d = driver(df => passOn("first-out")(counts(EmitStrategy.onWindowClose(), idle)(df)))
      try {
        val stepped = d.step(Row("u", ts(900)))
        (stepped, d.idle(ms(600)))
      } finally d.stop()
    }
    val (stepped, idled) = run(Some(Idle))
    assert(windows(stepped ++ idled) === Seq(("u", 0L, 1L)))
    assert(run(None) === ((Nil, Nil)), "without the idle timeout the window stays open")
  }

  test("an idle timeout on a chain's middle operator: what it releases on its idle clock reaches the next operator") {
    // aggregate_windowed (onWindowUpdate) -> suppress(untilWindowCloses, idle) -> suppress(untilTimeLimit 0)
    def run(idle: Option[Duration]) = {
      val d = driver(df => passOn("middle-out")(finals("middle", idle)(counts(EmitStrategy.onWindowUpdate())(df))))
      try {
        val stepped = d.step(Row("u", ts(900)), Row("v", ts(950)))
        (stepped, d.idle(ms(600)))
      } finally d.stop()
    }
    val (stepped, idled) = run(Some(Idle))
    assert(windows(stepped ++ idled) === Seq(("u", 0L, 1L), ("v", 0L, 1L)))
    assert(run(None) === ((Nil, Nil)), "without the idle timeout the final results wait for stream time")
  }

  test("an idle timeout on a chain's last operator; a restart amid idle periods loses and repeats nothing") {
    // aggregate_windowed (onWindowUpdate) -> suppress(untilWindowCloses, idle): the counts move the suppress's stream
    // time to 1500, which closes [0,1000); [1000,2000) needs 500 ms of idle time, [2000,3000) (z at 2500) 500 ms from
    // 2500.
    val d = driver(df => finals("last", Some(Idle))(counts(EmitStrategy.onWindowUpdate())(df)))
    try {
      // When each window leaves depends on how much wall time the steps take (any idle period closes [0,1000)), so
      // the assertions are on what has left by each point: each final result once, none before its window closed.
      val first = windows(d.step(Row("u", ts(900))) ++ d.step(Row("u", ts(1500))) ++ d.idle(ms(700)))
      assert(first === Seq(("u", 0L, 1L), ("u", 1000L, 1L)), "[1000,2000) closed on the idle clock")
      d.restart()
      // Spark runs no micro-batch after a restart until input arrives: a record moves the clocks on.
      val second = windows(d.step(Row("z", ts(2500))) ++ d.idle(ms(800)))
      assert(second === Seq(("z", 2000L, 1L)), "each final result once, across the restart")
    } finally d.stop()
  }

  test("a wall-clock suppress inside a chain lets each update out once its wall-clock time limit has passed") {
    // aggregate_windowed (onWindowUpdate) -> suppress(untilTimeLimit, wall clock). Wall-clock limits are not
    // deterministic, so the certain outcomes: a zero limit lets every update out in its own batch; a one-day limit
    // holds them; a 300 ms limit lets the latest update per window out exactly once after idle time.
    def chain(limit: Duration) = driver { df =>
      counts(EmitStrategy.onWindowUpdate())(df).transform(Suppress(
        Seq("user"),
        "ts",
        Suppressed.untilTimeLimit(limit, BufferConfig.unbounded(), SuppressionClock.ProcessingTime).withName("wall")
      ))
    }
    val zero = chain(ms(0))
    try {
      assert(windows(zero.step(Row("u", ts(900)))) === Seq(("u", 0L, 1L)))
      assert(windows(zero.step(Row("u", ts(950)))) === Seq(("u", 0L, 2L)))
    } finally zero.stop()
    val day = chain(Duration.ofDays(1))
    try {
      assert(day.step(Row("u", ts(900))) === Nil)
      assert(day.step(Row("u", ts(5000))) === Nil, "event time moves nothing on the wall clock")
    } finally day.stop()
    val short = chain(ms(300))
    try {
      val out = short.step(Row("u", ts(900)), Row("u", ts(950))) ++ short.idle(ms(800))
      assert(windows(out) === Seq(("u", 0L, 2L)), "the window's latest count, once")
    } finally short.stop()
  }

  test("a stream-table join starting a chain releases its waiting records on its idle clock") {
    // join_versioned (grace 1 s, idle) -> aggregate: the order at 500 waits for stream time 1500; its stream time
    // stands still, and on the idle clock it is released, joined and counted.
    val d = TestDriver(spark)
    val orders = d.addInput("orders", events, "ts", "0 seconds")
    val tierSchema = StructType(Seq(
      StructField("user", StringType),
      StructField("tier_ts", TimestampType),
      StructField("tier", StringType)
    ))
    val tiers = d.addInput("tiers", tierSchema, null, null)
    val joined = orders.transform(StreamTableJoin(
      "user",
      "ts",
      ChangelogTable.versioned(tiers, "tier_ts", Duration.ofSeconds(60)),
      Joined.inner().withGracePeriod(ms(1000)).withName("tiers-join").withIdleTimeout(Idle)
    ))
    d.start(joined.transform(Aggregate(Seq("user"), "ts", Seq(count("*").as("n")))))
    try {
      assert(d.stepInput("tiers", Seq(Row("u", ts(0), "gold"))) === Nil)
      val out = d.stepInput("orders", Seq(Row("u", ts(500)))) ++ d.idle(ms(1600))
      assert(out.map(r => (r.getAs[String]("user"), r.getAs[Long]("n"))) === Seq(("u", 1L)))
    } finally d.stop()
  }

  private val windowedUpdates = StructType(Seq(
    StructField("user", StringType),
    StructField("ts", TimestampType),
    StructField("n", LongType),
    StructField("window", StructType(Seq(StructField("start", TimestampType), StructField("end", TimestampType))))
  ))

  /** (user, window start, count, late) of each row. */
  private def flagged(rows: Seq[Row]): Seq[(String, Long, Long, Boolean)] =
    rows.map(r =>
      (
        r.getAs[String]("user"),
        r.getAs[Row]("window").getTimestamp(0).getTime,
        r.getAs[Long]("n"),
        r.getAs[Boolean]("late")
      )
    ).sorted

  /** Counts in 10 ms windows with 2 ms of grace, every update forwarded, late records emitted. */
  private def lateCounts(name: String): AggregateWindowed =
    AggregateWindowed(
      Seq("user"),
      "ts",
      TimeWindows.ofSizeAndGrace(ms(10), ms(2)),
      Seq(count("*").as("n")),
      EmitStrategy.onWindowUpdate()
    ).withName(name).withLateRecords(LateRecords.Emit)

  test("late records of a chain's first operator, an aggregation, pass the suppress after it by, flagged") {
    // aggregate_windowed (10 ms windows, grace 2, onWindowUpdate, late emitted) -> suppress(untilWindowCloses).
    // Kafka: u@15 closes [0,10) at the aggregation (10 + 2 <= 15) and the suppress (its stream time is 15 too), so
    // the final count leaves; u@3 is late at the aggregation, which drops it (the suppress never sees it): here it
    // leaves as the aggregation's row for [0,10) counting it alone, at its own time.
    val counts = lateCounts("late-counts")
    val d = driver(df => finals("late-finals")(counts(df)))
    try {
      assert(d.step(Row("u", ts(0))) === Nil)
      assert(flagged(d.step(Row("u", ts(15)))) === Seq(("u", 0L, 1L, false)))
      val late = d.step(Row("u", ts(3)))
      assert(flagged(late) === Seq(("u", 0L, 1L, true)))
      assert(late.head.getAs[Timestamp]("ts") === ts(3), "the late record's own time")
      assert(d.outputSchema.fieldNames.last === "late")
      assert(Metrics.forQuery(d.streamingQuery)("late-counts")("dropped-records-total") === 1.0)
    } finally d.stop()
  }

  test("late updates of a suppress that is not the chain's last operator leave at once, flagged") {
    // suppress(untilWindowCloses, grace 0, late emitted) over windowed updates -> suppress(untilTimeLimit 0):
    // v@20 closes [0,10), whose final count leaves through the second suppress; u's update for [0,10) after that
    // is late at the first suppress and leaves at once, past the second.
    val first = Suppress(
      Seq("user"),
      "ts",
      Suppressed.untilWindowCloses(BufferConfig.unbounded()).withName("late-first")
    )
      .withWindow(WindowColumns.struct("window")).withGrace(ms(0)).withLateRecords(LateRecords.Emit)
    val d = TestDriver(spark, windowedUpdates, "ts")
    d.start(passOn("after-late")(d.input.transform(first)))
    def update(k: String, t: Long, n: Long, start: Long) = Row(k, ts(t), n, Row(ts(start), ts(start + 10)))
    try {
      assert(d.step(update("u", 5, 1, 0)) === Nil)
      assert(flagged(d.step(update("v", 20, 1, 20))) === Seq(("u", 0L, 1L, false)))
      assert(flagged(d.step(update("u", 6, 2, 0))) === Seq(("u", 0L, 2L, true)))
    } finally d.stop()
  }

  test("a where or select after an operator that emits late records is refused, naming both") {
    val counts = lateCounts("reshaped")
    val d = TestDriver(spark, events, "ts")
    try {
      val e = intercept[IllegalArgumentException](
        d.input.transform(counts).withColumn("double", col("n") * 2).transform(finals("after-reshape"))
      )
      assert(
        e.getMessage.contains("aggregate_windowed 'reshaped': its emitted late records leave the chain as they are") &&
          e.getMessage.contains("Apply it to the chain's output instead"),
        e.getMessage
      )
    } finally d.stop()
  }
}
