package io.github.sparksuppress.spark

import java.sql.Timestamp
import java.time.Duration

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.functions.{col, struct}
import org.apache.spark.sql.types._

import io.github.sparksuppress.api._
import io.github.sparksuppress.testing.TestDriver
import io.github.sparksuppress.testkit.SparkLine
import io.github.sparksuppress.api.Metrics
import io.github.sparksuppress.spark.suppress.SuppressRules

class SuppressSuite extends SparkSessionSuite {

  private val schema = StructType(Seq(
    StructField("key", StringType),
    StructField("ts", TimestampType),
    StructField("value", StringType),
    StructField("deleted", BooleanType)
  ))

  private def ts(ms: Long) = new Timestamp(ms)
  private def rec(k: String, v: String, ms: Long, deleted: Boolean = false) = Row(k, ts(ms), v, deleted)
  private def kvt(rows: Seq[Row]): Seq[(String, String, Long)] =
    rows.map(r => (r.getString(0), r.getString(2), r.getTimestamp(1).getTime))

  private def driver(pipeline: DataFrame => DataFrame): TestDriver = {
    val d = TestDriver(spark, schema, "ts")
    d.start(pipeline(d.input))
  }

  private def ms(n: Long) = Duration.ofMillis(n)

  /** Bounds hold per state partition; with one partition these tests see Kafka's single-task behaviour. */
  private def onePartition[T](body: => T): T = {
    spark.conf.set("spark.sql.shuffle.partitions", "1")
    try body
    finally spark.conf.set("spark.sql.shuffle.partitions", "2")
  }

  test("the output columns carry none of the watermark bypass's metadata") {
    val d = TestDriver(spark, schema, "ts")
    val out = d.input.transform(Suppress("key", "ts", Suppressed.untilTimeLimit(ms(2), BufferConfig.unbounded())))
    val marked = out.schema.fields.filter(_.metadata.contains(common.WatermarkBypass.UnmarkedKey)).map(_.name)
    assert(marked.isEmpty, s"columns with the bypass's key: ${marked.mkString(", ")}")
  }

  test("untilTimeLimit keeps the first buffer time (Kafka's non-resetting rule) and emits the latest value") {
    val d = driver(_.transform(Suppress("key", "ts", Suppressed.untilTimeLimit(ms(2), BufferConfig.unbounded()))))
    try {
      assert(d.step(rec("v1", "1", 0)) === Nil)
      assert(d.step(rec("v1", "0", 1)) === Nil)
      assert(d.step(rec("v2", "1", 1)) === Nil)
      assert(kvt(d.step(rec("v1", "1", 2))) === Seq(("v1", "1", 2L)))
      assert(kvt(d.step(rec("tick", "1", 3))) === Seq(("v2", "1", 1L)))
      assert(d.step(rec("tick", "0", 4)) === Nil)
    } finally d.stop()
  }

  test("withTimerReset debounces: the buffer time follows the latest update") {
    val s = Suppressed.untilTimeLimit(ms(2), BufferConfig.unbounded()).withTimerReset()
    val d = driver(_.transform(Suppress("key", "ts", s)))
    try {
      assert(d.step(rec("A", "w", 0)) === Nil)
      assert(d.step(rec("A", "x", 1)) === Nil)
      assert(d.step(rec("B", "y", 2)) === Nil)
      assert(kvt(d.step(rec("C", "z", 3))) === Seq(("A", "x", 1L)))
    } finally d.stop()
  }

  test("a late record is buffered and let out at once; records below the watermark are not dropped") {
    val d = driver(_.transform(Suppress("key", "ts", Suppressed.untilTimeLimit(ms(2), BufferConfig.unbounded()))))
    try {
      assert(d.step(rec("A", "w", 10)) === Nil)
      assert(kvt(d.step(rec("B", "late", 1))) === Seq(("B", "late", 1L)))
      assert(kvt(d.step(rec("C", "zero", 0))) === Seq(("C", "zero", 0L)))
    } finally d.stop()
  }

  test("tombstones are forwarded by untilTimeLimit") {
    val d = driver(_.transform(
      Suppress("key", "ts", Suppressed.untilTimeLimit(ms(0), BufferConfig.unbounded())).withTombstone("deleted")
    ))
    try {
      val out = d.step(rec("A", null, 5, deleted = true))
      assert(out.map(r => (r.getString(0), r.getBoolean(3))) === Seq(("A", true)))
    } finally d.stop()
  }

  test("maxRecords with emitEarlyWhenFull evicts the oldest key, ties going to the smaller key") {
    val s = Suppressed.untilTimeLimit(Duration.ofMillis(Long.MaxValue), BufferConfig.maxRecords(2).emitEarlyWhenFull())
    val d = onePartition(driver(_.transform(Suppress("key", "ts", s))))
    try {
      assert(d.step(rec("A", "w", 0)) === Nil)
      assert(d.step(rec("A", "x", 1)) === Nil)
      assert(d.step(rec("B", "y", 2)) === Nil)
      assert(kvt(d.step(rec("C", "z", 0))) === Seq(("A", "x", 1L)))
    } finally d.stop()
  }

  test("shutDownWhenFull stops the query with an error naming the operator, the bound and the counts") {
    val s = Suppressed.untilTimeLimit(Duration.ofMillis(Long.MaxValue), BufferConfig.maxRecords(1).shutDownWhenFull())
      .withName("alerts")
    val d = onePartition(driver(_.transform(Suppress("key", "ts", s))))
    try {
      assert(d.step(rec("v1", "1", 0)) === Nil)
      assert(d.step(rec("v1", "0", 200)) === Nil)
      val e = intercept[Exception](d.step(rec("v2", "1", 200)))
      val message = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")
      assert(message.contains("alerts buffer exceeded its max capacity. Currently [2/1] records"), message)
    } finally d.stop()
  }

  test("untilTimeLimit of windowed rows buffers one update per key and window, as Kafka's windowed KTable keys it") {
    // Kafka suppresses a KTable<Windowed<K>, V>: the buffer's key is the key with its window, so updates of two
    // windows of one key within the time limit both leave, each its own latest.
    val windowed = StructType(schema.fields :+ StructField(
      "window",
      StructType(Seq(StructField("start", TimestampType), StructField("end", TimestampType)))
    ))
    val d = TestDriver(spark, windowed, "ts")
    val s = Suppress(Seq("key"), "ts", Suppressed.untilTimeLimit(ms(10), BufferConfig.unbounded()))
      .withWindow(WindowColumns.struct("window"))
    d.start(d.input.transform(s))
    def w(k: String, v: String, t: Long, start: Long) = Row(k, ts(t), v, false, Row(ts(start), ts(start + 100)))
    def left(rows: Seq[Row]) = rows.map(r => (r.getString(2), r.getStruct(4).getTimestamp(0).getTime))
    try {
      // (k, [0, 100)) is buffered from 1, due at 11; (k, [100, 200)) from 2, due at 12. Keyed by key alone, the
      // entry would be one, from 1, and only b2 would leave, at 11.
      assert(d.step(w("k", "a1", 1, 0)) === Nil)
      assert(d.step(w("k", "b1", 2, 100)) === Nil)
      assert(d.step(w("k", "a2", 3, 0)) === Nil)
      assert(d.step(w("k", "b2", 4, 100)) === Nil)
      assert(left(d.step(w("tick", "t", 11, 200))) === Seq(("a2", 0L)))
      assert(left(d.step(w("tick", "t", 12, 200))) === Seq(("b2", 100L)))
    } finally d.stop()
  }

  test("untilWindowCloses emits each window once, when end + grace <= stream time, and drops tombstones") {
    val windowed = StructType(schema.fields :+ StructField(
      "window",
      StructType(Seq(
        StructField("start", TimestampType),
        StructField("end", TimestampType)
      ))
    ))
    val d = TestDriver(spark, windowed, "ts")
    val s = Suppress(Seq("key"), "ts", Suppressed.untilWindowCloses(BufferConfig.unbounded()))
      .withWindow(WindowColumns.struct("window")).withGrace(ms(1)).withTombstone("deleted")
    d.start(d.input.transform(s))
    def w(k: String, v: String, t: Long, start: Long, end: Long, del: Boolean = false) =
      Row(k, ts(t), v, del, Row(ts(start), ts(end)))
    try {
      assert(d.step(w("hey", "7", 99, 99, 100)) === Nil)
      assert(d.step(w("d1", "7", 100, 100, 101)) === Nil)
      val out = d.step(w("d2", "7", 101, 101, 102))
      assert(out.map(r => (r.getString(0), r.getString(2), r.getStruct(4).getTimestamp(1).getTime)) === Seq((
        "hey",
        "7",
        100L
      )))
      assert(d.step(w("gone", null, 50, 0, 100, del = true)) === Nil, "a tombstone is dropped on emit")
    } finally d.stop()
  }

  test(
    "untilWindowCloses with LateRecords.Emit: an update for a closed window leaves flagged, once, also after a restart"
  ) {
    val windowed = StructType(schema.fields :+ StructField(
      "window",
      StructType(Seq(
        StructField("start", TimestampType),
        StructField("end", TimestampType)
      ))
    ))
    def w(k: String, v: String, t: Long, start: Long, end: Long) = Row(k, ts(t), v, false, Row(ts(start), ts(end)))
    def run(late: LateRecords)(body: TestDriver => Unit): Unit = {
      val d = TestDriver(spark, windowed, "ts")
      val s = Suppress(
        Seq("key"),
        "ts",
        Suppressed.untilWindowCloses(BufferConfig.unbounded()).withName(s"late-${late.name}")
      )
        .withWindow(WindowColumns.struct("window")).withGrace(ms(1)).withLateRecords(late)
      d.start(d.input.transform(s))
      try body(d)
      finally d.stop()
    }
    run(LateRecords.Drop) { d =>
      assert(d.step(w("hey", "7", 99, 99, 100)) === Nil)
      assert(d.step(w("d2", "7", 101, 101, 102)).map(_.getString(2)) === Seq("7"))
      val again = d.step(w("hey", "8", 99, 99, 100))
      assert(
        again.map(r => (r.getString(0), r.getString(2))) === Seq(("hey", "8")),
        "Kafka lets it out like a final result"
      )
      assert(again.head.length === 5, "no late column by default")
    }
    def klv(rows: Seq[Row]) = rows.map(r => (r.getString(0), r.getString(2), r.getBoolean(5)))
    run(LateRecords.Emit) { d =>
      assert(d.step(w("hey", "7", 99, 99, 100)) === Nil)
      assert(klv(d.step(w("d2", "7", 101, 101, 102))) === Seq(("hey", "7", false)))
      assert(klv(d.step(w("hey", "8", 99, 99, 100))) === Seq(("hey", "8", true)))
      d.restart()
      assert(d.advance() === Nil, "the late row is not emitted again")
      assert(
        klv(d.step(w("hey", "9", 100, 99, 100))) === Seq(("hey", "9", true)),
        "the watermark came back from the checkpoint"
      )
      assert(klv(d.step(w("x", "1", 103, 103, 104))) === Seq(("d2", "7", false)))
    }
  }

  test("a wall-clock time limit lets each key's latest update out once, with no input after it to wake the key") {
    // A lone wall-clock suppress is woken by a processing-time timeout set for its next due entry. Wall-clock limits
    // are not deterministic, so the certain outcome: after idle time well past the limit, each key's latest update
    // has left exactly once.
    val limit = Suppressed.untilTimeLimit(ms(300), BufferConfig.unbounded(), SuppressionClock.ProcessingTime)
    val d = driver(_.transform(Suppress("key", "ts", limit.withName("wall-alone"))))
    try {
      val out = d.step(rec("a", "1", 0), rec("a", "2", 10), rec("b", "1", 5)) ++ d.idle(ms(800))
      assert(kvt(out).sortBy(_._1) === Seq(("a", "2", 10L), ("b", "1", 5L)))
      assert(d.idle(ms(400)) === Nil, "nothing leaves twice")
    } finally d.stop()
  }

  test("LateRecords.Emit is refused for untilTimeLimit, naming the parameter and the fix") {
    val e = intercept[IllegalArgumentException] {
      Suppress(
        "key",
        "ts",
        Suppressed.untilTimeLimit(ms(10), BufferConfig.unbounded())
      ).withLateRecords(LateRecords.Emit).request
    }
    assert(e.getMessage.contains("lateRecords") && e.getMessage.contains("untilWindowCloses only"))
  }

  test("a restart from the checkpoint loses and duplicates nothing that was buffered") {
    val s = Suppressed.untilTimeLimit(ms(10), BufferConfig.unbounded()).withName("durable")
    val d = driver(_.transform(Suppress("key", "ts", s)))
    try {
      assert(d.step(rec("a", "1", 0), rec("b", "1", 1)) === Nil)
      assert(d.step(rec("a", "2", 5)) === Nil)
      d.restart()
      assert(d.advance() === Nil)
      assert(kvt(d.step(rec("c", "1", 10))).sorted === Seq(("a", "2", 5L)))
      assert(kvt(d.step(rec("c", "2", 30))).sorted === Seq(("b", "1", 1L), ("c", "2", 30L)))
    } finally d.stop()
  }

  test("the input must be streaming, watermarked, and name existing columns") {
    val s = Suppressed.untilTimeLimit(ms(1), BufferConfig.unbounded())
    val batch = spark.range(1).select(col("id").cast("string").as("key"), col("id").cast("timestamp").as("ts"))
    assert(intercept[IllegalArgumentException](batch.transform(Suppress("key", "ts", s))).getMessage
      .contains("is not a streaming DataFrame"))
    val d = TestDriver(spark, schema, "ts")
    val raw = io.github.sparksuppress.shims.StreamingRuntime.MemoryStream[Row](
      org.apache.spark.sql.Encoders.row(schema),
      spark.sqlContext
    )
    val noWatermark = raw.toDF()
    val e1 = intercept[IllegalArgumentException](noWatermark.transform(Suppress("key", "ts", s)))
    assert(
      e1.getMessage.contains("has no event-time watermark") && e1.getMessage.contains("withWatermark(\"ts\""),
      e1.getMessage
    )
    val e2 = intercept[IllegalArgumentException](d.input.transform(Suppress("user", "ts", s)))
    assert(e2.getMessage.contains("key 'user' is not a column of the input"), e2.getMessage)
    val e3 = intercept[IllegalArgumentException](d.input.transform(Suppress("key", "value", s)))
    assert(e3.getMessage.contains("timestamp column 'value' must be a timestamp"), e3.getMessage)
    val e4 = intercept[IllegalArgumentException](d.input.transform(Suppress("key", "ts", s).withGrace(ms(5))))
    assert(e4.getMessage.contains("grace applies to untilWindowCloses only"), e4.getMessage)
    val e5 = intercept[IllegalArgumentException](
      d.input.transform(Suppress("key", "ts", Suppressed.untilWindowCloses(BufferConfig.unbounded())).withGrace(ms(1)))
    )
    assert(e5.getMessage.contains("untilWindowCloses needs windowed input"), e5.getMessage)
    val e6 = intercept[IllegalArgumentException](
      d.input.transform(Suppress("key", "ts", Suppressed.untilTimeLimit(ms(1), BufferConfig.unbounded().spillToDisk())))
    )
    assert(e6.getMessage.contains("spark.sql.streaming.stateStore.providerClass"), e6.getMessage)
    assert(intercept[IllegalArgumentException](Suppressed.untilTimeLimit(ms(-1), BufferConfig.unbounded())).getMessage
      .contains("timeToWaitForMoreEvents must be >= 0"))
    assert(
      intercept[IllegalArgumentException](BufferConfig.maxRecords(-1)).getMessage.contains("maxRecords must be >= 0")
    )
  }

  test("metrics are readable for a running query, with Kafka's names") {
    val s = Suppressed.untilTimeLimit(ms(2), BufferConfig.unbounded()).withName("metered")
    val d = driver(_.transform(Suppress("key", "ts", s)))
    try {
      d.step(rec("a", "1", 0))
      d.step(rec("b", "1", 1))
      d.step(rec("c", "1", 2))
      val m = Metrics.forQuery(d.streamingQuery)("metered")
      assert(m("suppression-emit-total") === 1.0)
      assert(m("suppression-buffer-count-current") === 2.0)
      // Sampled after each batch: c was buffered in one batch and a let out in the next, so the peak was 3.
      assert(m("suppression-buffer-count-max") === 3.0)
      // 28 per entry + key (1 byte) + value columns: "value" (1 byte) and "deleted" (a boolean, 1 byte).
      assert(m("suppression-buffer-size-current") === 2.0 * (28 + 1 + 1 + 1))
      // Spark's own progress report carries each batch's emitted count under the operator instance's observation
      // name: spark_suppress:<operator name>#<instance>. a left in the no-data batch after c's, whose observed
      // metrics Spark 3.5 leaves out of the report (it reports them for batches with new data only).
      val observed = d.streamingQuery.recentProgress.flatMap(_.observedMetrics.asScala.collect {
        case (name, row) if name.startsWith("spark_suppress:metered#") => row.getAs[Long]("emitted")
      })
      assert(observed.nonEmpty)
      assert(observed.sum === (if (SparkLine.is35) 0L else 1L))
    } finally d.stop()
  }

  test("an operator following another stateful operator in the same query is refused with the way out") {
    val first = Suppress("key", "ts", Suppressed.untilTimeLimit(ms(0), BufferConfig.unbounded()))
    val second = Suppress("key", "ts", Suppressed.untilTimeLimit(ms(2), BufferConfig.unbounded()))
    val d = TestDriver(spark, schema, "ts")
    // Applied to the first's output (through where/select too), the second joins its chain; another Spark operator
    // in between cannot join it.
    val e = intercept[IllegalArgumentException](d.input.transform(first).dropDuplicates("key").transform(second))
    assert(e.getMessage.contains("its input applies Spark's Deduplicate to the output of suppress"), e.getMessage)
    assert(e.getMessage.contains("write the upstream result to a sink and read it there"), e.getMessage)
    val counted = d.input.groupBy(col("key")).count()
    val refused = intercept[IllegalArgumentException](
      counted.select(col("key"), org.apache.spark.sql.functions.current_timestamp().as("ts")).transform(first)
    ).getMessage
    assert(refused.contains("(Aggregate)"), refused)
    assert(refused.contains("use this library's aggregate"), refused)
  }

  test("the Scala implicit syntax applies the operator") {
    import io.github.sparksuppress.implicits._
    val d = driver(_.suppress(Seq("key"), "ts", Suppressed.untilTimeLimit(ms(0), BufferConfig.unbounded())))
    try assert(kvt(d.step(rec("a", "1", 3))) === Seq(("a", "1", 3L)))
    finally d.stop()
  }

  test("spillToDisk keeps an unbounded buffer in the RocksDB state store") {
    spark.conf.set("spark.sql.streaming.stateStore.providerClass", SuppressRules.RocksDBProvider)
    try {
      val s = Suppressed.untilTimeLimit(ms(2), BufferConfig.maxRecords(1).spillToDisk())
      val d = driver(_.transform(Suppress("key", "ts", s)))
      try {
        // The record bound is not enforced: RocksDB holds whatever the time limit keeps.
        assert(d.step(rec("a", "1", 0), rec("b", "1", 1)) === Nil)
        d.restart()
        assert(kvt(d.step(rec("c", "1", 3))).sorted === Seq(("a", "1", 0L), ("b", "1", 1L)))
      } finally d.stop()
    } finally spark.conf.unset("spark.sql.streaming.stateStore.providerClass")
  }
}
