package io.github.sparksuppress.spark.chain

import java.sql.Timestamp
import java.time.Duration

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.functions.{col, count, lit, rand, upper}
import org.apache.spark.sql.types._

import io.github.sparksuppress.api._
import io.github.sparksuppress.spark.SparkSessionSuite
import io.github.sparksuppress.testing.TestDriver

/**
 * `where` and `select`/`withColumn` between two of this library's operators run inside the chain, with the semantics
 * Kafka gives `filter` and `mapValues` at that place. Every expected output below is derived by hand from Kafka's
 * rules, named in each test; each case is chosen so that Spark's own filter after the operator (a stream filter)
 * would emit something else.
 */
class ChainStatelessStepsSuite extends SparkSessionSuite {

  override protected def extraConf: Map[String, String] = Map("spark.sql.shuffle.partitions" -> "1")

  private val schema = StructType(Seq(
    StructField("key", StringType),
    StructField("ts", TimestampType),
    StructField("value", LongType)
  ))

  private def at(key: String, ts: Long, value: Long): Row = Row(key, new Timestamp(ts), value)

  private val latest = Aggregate(Seq("key"), "ts", Seq(Latest.column(col("value")).as("value")))
  private val immediately =
    Suppress(Seq("key"), "ts", Suppressed.untilTimeLimit(Duration.ZERO, BufferConfig.unbounded()))

  /** (key, value or "tombstone", ts) of what each step emitted. */
  private def run(
      driver: TestDriver,
      rows: Seq[Row],
      restartAfter: Set[Int] = Set.empty
  ): Seq[Seq[(String, String, Long)]] =
    rows.zipWithIndex.map { case (r, i) =>
      val out = driver.step(r) ++ (if (restartAfter(i)) { driver.restart(); driver.advance() }
                                   else Nil)
      out.map { o =>
        val deleted = o.schema.fieldNames.contains("retraction") && o.getBoolean(o.fieldIndex("retraction"))
        val value = if (deleted) "tombstone" else String.valueOf(o.get(o.fieldIndex("value")))
        (o.getString(0), value, o.getTimestamp(o.fieldIndex("ts")).getTime)
      }
    }

  private def started(pipeline: DataFrame => DataFrame): TestDriver = {
    val driver = TestDriver(spark, schema, "ts")
    driver.start(pipeline(driver.input))
  }

  private val ups = Seq(at("a", 1, 7), at("a", 2, 3), at("a", 3, 2), at("a", 4, 9), at("b", 5, 1))

  test("where on a table before a suppress is KTable.filter with old values: a failing update leaves as a tombstone " +
    "only when the key's previous value passed") {
    // Kafka: suppress enables old values; KTableFilter forwards Change(filter(new), filter(old)) unless both are null.
    // a=7 passes; a=3 fails after 7 passed -> tombstone; a=2 fails after 3 failed -> nothing; a=9 passes; b=1 fails as
    // b's first value -> nothing. A stream filter would never emit the tombstone.
    val driver = started(_.transform(latest).where(col("value") >= 5).transform(immediately))
    try {
      assert(driver.outputSchema.fieldNames.toSeq === Seq("key", "value", "ts", "retraction"))
      assert(run(driver, ups) === Seq(Seq(("a", "7", 1L)), Seq(("a", "tombstone", 2L)), Nil, Seq(("a", "9", 4L)), Nil))
    } finally driver.stop()
  }

  test("a table filter remembers which keys passed across a restart from the checkpoint") {
    val driver = started(_.transform(latest).where(col("value") >= 5).transform(immediately))
    try assert(run(driver, ups, restartAfter = Set(0, 2)) ===
        Seq(Seq(("a", "7", 1L)), Seq(("a", "tombstone", 2L)), Nil, Seq(("a", "9", 4L)), Nil))
    finally driver.stop()
  }

  test("where on a table before an aggregation is KTable.filter without old values: every failing update is a " +
    "tombstone, and a time-window count counts it") {
    // Kafka: the aggregation reads the filter's toStream(), which asks for no old values, so KTableFilter forwards
    // Change(null, null) for each failing update; KStreamWindowAggregate drops null keys only, so count() counts
    // it. Counts per key: a: 1 (fails), 2, 3 -> the windowed count of [0, 10) goes 1, 2, 3. A stream filter would
    // drop the first and count 1, 2.
    val windowed = AggregateWindowed(
      Seq("key"),
      "ts",
      TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(5)),
      Seq(count(lit(1)).as("value")),
      EmitStrategy.onWindowUpdate()
    )
    val counts = Aggregate(Seq("key"), "ts", Seq(count(lit(1)).as("value")))
    val driver = started(_.transform(counts).where(col("value") >= 2).transform(windowed))
    try assert(run(driver, Seq(at("a", 1, 0), at("a", 2, 0), at("a", 3, 0))) ===
        Seq(Seq(("a", "1", 1L)), Seq(("a", "2", 2L)), Seq(("a", "3", 3L))))
    finally driver.stop()
  }

  test("withColumn between two operators is mapValues: it changes the value and keeps key, window and time") {
    // Kafka: mapValues forwards every record with the new value and the same key, window and timestamp. A tumbling
    // count of 10 ms, doubled, then final results: [0, 10) closes at 10 + grace 2 = 12.
    val windowed = AggregateWindowed(
      Seq("key"),
      "ts",
      TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(2)),
      Seq(count(lit(1)).as("n")),
      EmitStrategy.onWindowUpdate()
    )
    val finals = Suppress(Seq("key"), "ts", Suppressed.untilWindowCloses(BufferConfig.unbounded()))
    val driver = started(_.transform(windowed).withColumn("value", col("n") * 2).transform(finals))
    try {
      assert(driver.outputSchema.fieldNames.toSeq === Seq("key", "window", "n", "ts", "value"))
      assert(run(driver, Seq(at("a", 1, 0), at("a", 4, 0), at("a", 13, 0))) === Seq(Nil, Nil, Seq(("a", "4", 4L))))
    } finally driver.stop()
  }

  test("a tombstone keeps its key and time through a select, and a where on a stream (a join's output) drops records") {
    // Kafka: KStream.filter drops a record that fails, forwarding nothing. The left join's unmatched order fails
    // `tier is not null`; the matched one passes and is counted.
    val orders = StructType(Seq(StructField("key", StringType), StructField("ts", TimestampType)))
    val tiers = StructType(Seq(
      StructField("key", StringType),
      StructField("changed_at", TimestampType),
      StructField("tier", StringType)
    ))
    val driver = TestDriver(spark)
    try {
      val o = driver.addInput("orders", orders, "ts", "0 seconds")
      val t = driver.addInput("tiers", tiers, null, null)
      driver.start(o
        .transform(StreamTableJoin(
          "key",
          "ts",
          ChangelogTable.versioned(t, "changed_at", Duration.ofSeconds(60)),
          Joined.left()
        ))
        .where(col("tier").isNotNull)
        .select(col("key"), col("ts"), upper(col("tier")).as("tier"))
        .transform(AggregateWindowed(
          Seq("key"),
          "ts",
          TimeWindows.ofSizeWithNoGrace(Duration.ofMillis(1000)),
          Seq(count(lit(1)).as("n")),
          EmitStrategy.onWindowUpdate()
        )))
      assert(driver.stepInput("orders", Seq(Row("a", new Timestamp(100)))) === Nil)
      driver.stepInput("tiers", Seq(Row("a", new Timestamp(0), "gold")))
      val counted = driver.stepInput("orders", Seq(Row("a", new Timestamp(200))))
      assert(counted.map(r => (r.getString(0), r.getLong(2))) === Seq(("a", 1L)))
    } finally driver.stop()
  }

  test(
    "re-keying, dropping the event time and other Spark operators between two operators are refused, naming the way out"
  ) {
    val driver = TestDriver(spark, schema, "ts")
    val counts = driver.input.transform(latest)
    val rekeyed =
      intercept[IllegalArgumentException](counts.withColumn("key", upper(col("key"))).transform(immediately))
    assert(
      rekeyed.getMessage.contains("replaces column 'key', the key") && rekeyed.getMessage.contains("second query") &&
        rekeyed.getMessage.contains("repartition topic"),
      rekeyed.getMessage
    )
    val noTime = intercept[IllegalArgumentException](counts.select("key", "value").transform(immediately))
    assert(noTime.getMessage.contains("drops column 'ts', the event time"), noTime.getMessage)
    val other = intercept[IllegalArgumentException](counts.dropDuplicates("key").transform(immediately))
    assert(
      other.getMessage.contains("applies Spark's Deduplicate to the output of aggregate") &&
        other.getMessage.contains("write the upstream result to a sink"),
      other.getMessage
    )
    val random = intercept[IllegalArgumentException](counts.where(rand() > 0.5).transform(immediately))
    assert(random.getMessage.contains("not deterministic"), random.getMessage)
  }

  test(
    "where on a table changelog before its suppress is the source KTable's filter: a key that stops passing is deleted"
  ) {
    // Kafka: builder.table("in").filter(v >= 5).suppress(...): the suppress asks for old values, so an update that
    // fails after one that passed leaves as a tombstone (a deletion of the key), one that fails after a failing one
    // (or the key's deletion) leaves nothing. Spark's filter on the input would drop the update and keep a=7.
    val changelog = StructType(schema.fields :+ StructField("deleted", BooleanType))
    val driver = TestDriver(spark, changelog, "ts")
    try {
      driver.start(driver.input.where(col("value") >= 5)
        .transform(immediately.withTombstone("deleted")))
      def step(key: String, ts: Long, value: java.lang.Long) =
        driver.step(Row(key, new Timestamp(ts), value, value == null))
          .map(o => (o.getString(0), o.getBoolean(o.fieldIndex("deleted")), o.getTimestamp(1).getTime))
      assert(step("a", 1, 7L) === Seq(("a", false, 1L)))
      assert(step("a", 2, 3L) === Seq(("a", true, 2L)))
      assert(step("a", 3, 2L) === Nil)
      assert(step("a", 4, 9L) === Seq(("a", false, 4L)))
      assert(step("a", 5, null) === Seq(("a", true, 5L)), "a deletion of a passing key is forwarded")
      assert(step("b", 6, null) === Nil, "a deletion of a key that never passed is not")
    } finally driver.stop()
  }
}
