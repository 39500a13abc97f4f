package io.github.sparksuppress.reliability

import java.sql.Timestamp
import java.time.{Duration, Instant, LocalDate, LocalDateTime, Period}

import org.apache.spark.sql.{DataFrame, Row}
import io.github.sparksuppress.shims.StreamingRuntime.MemoryStream
import org.apache.spark.sql.functions.{col, lit, struct}
import org.apache.spark.sql.types._

import io.github.sparksuppress.RuntimeCompatibility
import io.github.sparksuppress.api._
import io.github.sparksuppress.api.Metrics
import io.github.sparksuppress.spark.SparkSessionSuite
import io.github.sparksuppress.spark.common.{KeyEncoding, Variant}
import io.github.sparksuppress.testing.TestDriver

/**
 * Bad input, each case either a clear error (when the operator is built, or, for a bad row, a query failure whose
 * message names the operator, the column and the fix) or a documented, counted drop; never silent loss.
 * docs/reliability.md lists every decision.
 */
class BadInputSuite extends SparkSessionSuite {
  import BadInputSuite._

  private val updates = StructType(Seq(
    StructField("key", StringType),
    StructField("ts", TimestampType),
    StructField("value", LongType)
  ))
  private val T0 = OperatorsUnderTest.T0

  private def ts(ms: Long) = new Timestamp(ms)
  private def ms(n: Long) = Duration.ofMillis(n)
  private def timeLimit(n: Long) = Suppressed.untilTimeLimit(ms(n), BufferConfig.unbounded())

  private def suppressDriver(schema: StructType, key: Seq[String], s: Suppressed): TestDriver = {
    val d = TestDriver(spark, schema, "ts")
    d.start(d.input.transform(Suppress(key, "ts", s)))
  }

  private def onePartition[T](body: => T): T = {
    spark.conf.set("spark.sql.shuffle.partitions", "1")
    try body
    finally spark.conf.set("spark.sql.shuffle.partitions", "2")
  }

  /** The messages of an exception and its causes. */
  private def messages(e: Throwable): String =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).map(String.valueOf(_)).mkString("\n")

  test("suppress: a null key is an ordinary key value (Spark's grouping), in single and composite keys") {
    val schema = StructType(updates.fields :+ StructField("region", StringType))
    val d = suppressDriver(schema, Seq("key", "region"), timeLimit(10))
    try {
      assert(d.step(
        Row(null, ts(T0), 1L, "eu"),
        Row(null, ts(T0 + 1), 2L, "eu"),
        Row("a", ts(T0), 3L, null),
        Row(null, ts(T0 + 2), 4L, null)
      ) === Nil)
      val out = d.step(Row("tick", ts(T0 + 100), 0L, "x"))
      assert(out.map(r => (r.getString(0), r.getLong(2), r.getString(3))).toSet ===
        Set((null, 2L, "eu"), ("a", 3L, null), (null, 4L, null)))
    } finally d.stop()
  }

  test("stream-table join: null keys are dropped and counted by an inner join (Kafka), kept by a left join") {
    for (
      (joined, expected) <-
        Seq(Joined.inner() -> Set(("a", 1L, "gold")), Joined.left() -> Set(("a", 1L, "gold"), (null, 2L, null)))
    ) {
      val d = TestDriver(spark)
      val orders = d.addInput("orders", updates, null, null)
      val tiers = d.addInput(
        "tiers",
        StructType(Seq(
          StructField("key", StringType),
          StructField("at", TimestampType),
          StructField("tier", StringType)
        )),
        null,
        null
      )
      d.start(orders.transform(StreamTableJoin(
        "key",
        "ts",
        ChangelogTable.versioned(tiers, "at", ms(1000)),
        joined.withName("nulls")
      )))
      try {
        assert(d.stepInput("tiers", Seq(Row("a", ts(T0), "gold"), Row(null, ts(T0), "lost"))) === Nil)
        val out = d.stepInput("orders", Seq(Row("a", ts(T0 + 1), 1L), Row(null, ts(T0 + 1), 2L)))
        assert(out.map(r => (r.getString(0), r.getLong(2), r.getString(3))).toSet === expected)
        val m = Metrics.forQuery(d.streamingQuery)("nulls")
        assert(m("dropped-null-table-key-total") === 1.0)
        assert(m("dropped-null-key-or-value-total") === (if (joined.joinType.emitsWithoutTableValue) 0.0 else 1.0))
      } finally d.stop()
    }
  }

  test("suppress: a null event time stops the query with a message naming the operator, the column and the fix") {
    val d = suppressDriver(updates, Seq("key"), timeLimit(10).withName("null-ts"))
    try {
      val e = intercept[Exception](d.step(Row("a", null, 1L)))
      val m = messages(e)
      assert(
        m.contains("suppress 'null-ts': the event-time column 'ts' is null in an input row") && m.contains(
          "Filter such rows out"
        ),
        m
      )
    } finally d.stop()
  }

  test("stream-table join: a null event time stops the query with a clear message") {
    val d = TestDriver(spark)
    val orders = d.addInput("orders", updates, null, null)
    val tiers =
      d.addInput("tiers", StructType(Seq(StructField("key", StringType), StructField("at", TimestampType))), null, null)
    d.start(orders.transform(StreamTableJoin(
      "key",
      "ts",
      ChangelogTable.nonVersioned(tiers, "at"),
      Joined.left().withName("null-ts-join")
    )))
    try {
      val m = messages(intercept[Exception](d.stepInput("orders", Seq(Row("a", null, 1L)))))
      assert(m.contains("join_versioned 'null-ts-join': a stream row has a null event time"), m)
    } finally d.stop()
  }

  test("suppress: event times before 1970 are refused with a clear message (Spark's watermark never goes below 0)") {
    val d = suppressDriver(updates, Seq("key"), timeLimit(10).withName("pre-epoch"))
    try {
      val m = messages(intercept[Exception](d.step(Row("a", ts(-5000), 1L))))
      assert(m.contains("suppress 'pre-epoch': an input row has the event time") && m.contains("before 1970-01-01"), m)
      assert(m.contains("shift the event times"), m)
    } finally d.stop()
  }

  test("suppress: records at 1970-01-01 are buffered and timed correctly (timers must be > 0 in Spark)") {
    val d = suppressDriver(updates, Seq("key"), timeLimit(1))
    try {
      assert(d.step(Row("a", ts(0), 1L)) === Nil, "due at 1 ms: its timer cannot be 0, Spark refuses that")
      assert(d.step(Row("b", ts(0), 2L)) === Nil)
      assert(d.step(Row("c", ts(2), 3L)).map(_.getString(0)).toSet === Set("a", "b"))
    } finally d.stop()
  }

  test("stream-table join: event times before 1970 join as of their own time (the join keeps its own clocks)") {
    val d = TestDriver(spark)
    val orders = d.addInput("orders", updates, null, null)
    val tiers = d.addInput(
      "tiers",
      StructType(Seq(
        StructField("key", StringType),
        StructField("at", TimestampType),
        StructField("tier", StringType)
      )),
      null,
      null
    )
    d.start(orders.transform(StreamTableJoin(
      "key",
      "ts",
      ChangelogTable.versioned(tiers, "at", ms(100000)),
      Joined.left().withGracePeriod(ms(10))
    )))
    try {
      d.stepInput("tiers", Seq(Row("a", ts(-5000), "old")))
      d.stepInput("tiers", Seq(Row("a", ts(-1000), "new")))
      assert(d.stepInput("orders", Seq(Row("a", ts(-3000), 1L))) === Nil)
      val out = d.stepInput("orders", Seq(Row("a", ts(-500), 2L)))
      assert(out.map(r => (r.getLong(2), r.getString(3))) === Seq((1L, "old")))
    } finally d.stop()
  }

  test("suppress: timestamps near the largest Spark timestamp (9999-12-31) are buffered and emitted on time") {
    val max = Instant.parse("9999-12-31T23:59:59.999Z").toEpochMilli
    val d = suppressDriver(updates, Seq("key"), timeLimit(500))
    try {
      assert(d.step(Row("a", ts(max - 1000), 1L)) === Nil)
      assert(d.step(Row("b", ts(max - 600), 2L)) === Nil)
      assert(d.step(Row("c", ts(max), 3L)).map(_.getString(0)).toSet === Set("a", "b"))
      assert(d.step(Row("a", ts(max), 4L)) === Nil, "c and a wait for a stream time beyond the largest timestamp")
    } finally d.stop()
    val forever = suppressDriver(
      updates,
      Seq("key"),
      Suppressed.untilTimeLimit(ms(Long.MaxValue - 1), BufferConfig.unbounded())
    )
    try {
      assert(forever.step(Row("a", ts(0), 1L)) === Nil)
      assert(
        forever.step(Row("b", ts(max), 2L)) === Nil,
        "a limit beyond the timestamp range never expires (saturating)"
      )
    } finally forever.stop()
  }

  test(
    "aggregate_windowed: records before 1970 are dropped and counted; windows at 1970 and near 9999-12-31 close on time"
  ) {
    val max = Instant.parse("9999-12-31T23:59:59.999Z").toEpochMilli
    val d = TestDriver(spark, updates, "ts")
    d.start(d.input.transform(AggregateWindowed(
      Seq("key"),
      "ts",
      TimeWindows.ofSizeWithNoGrace(ms(1000)),
      Seq(org.apache.spark.sql.functions.count("*").as("n")),
      EmitStrategy.onWindowClose()
    ).withName("time-range")))
    def windows(rows: Seq[Row]) = rows.map(r => (r.getString(0), r.getStruct(1).getTimestamp(0).getTime, r.getLong(2)))
    try {
      assert(d.step(Row("a", ts(-5000), 1L), Row("a", ts(0), 2L), Row("a", ts(999), 3L)) === Nil)
      assert(Metrics.forQuery(d.streamingQuery)("time-range")("dropped-records-total") === 1.0)
      assert(windows(d.step(Row("b", ts(1000), 4L))) === Seq(("a", 0L, 2L)), "the window [0, 1000) closes at 1000")
      assert(windows(d.step(Row("c", ts(max - 1500), 5L))) === Seq(("b", 1000L, 1L)))
      assert(
        windows(d.step(Row("c", ts(max), 6L))) === Seq(("c", max - 1500 - Math.floorMod(max - 1500, 1000L), 1L)),
        "the window ending 999 ms before the largest timestamp closes; the last one waits for a later stream time"
      )
    } finally d.stop()
  }

  test("duplicate records: suppress keeps one (the latest), the join emits each") {
    val d = suppressDriver(updates, Seq("key"), timeLimit(10))
    try {
      assert(d.step(Row("a", ts(T0), 1L), Row("a", ts(T0), 1L)) === Nil)
      assert(d.step(Row("a", ts(T0), 1L)) === Nil)
      assert(d.step(Row("z", ts(T0 + 10), 0L)).map(r => (r.getString(0), r.getLong(2))) === Seq(("a", 1L)))
    } finally d.stop()
    val j = TestDriver(spark)
    val orders = j.addInput("orders", updates, null, null)
    val tiers = j.addInput(
      "tiers",
      StructType(Seq(
        StructField("key", StringType),
        StructField("at", TimestampType),
        StructField("tier", StringType)
      )),
      null,
      null
    )
    j.start(orders.transform(StreamTableJoin(
      "key",
      "ts",
      ChangelogTable.versioned(tiers, "at", ms(1000)),
      Joined.inner()
    )))
    try {
      j.stepInput("tiers", Seq(Row("a", ts(T0), "gold"), Row("a", ts(T0), "gold")))
      val out = j.stepInput("orders", Seq(Row("a", ts(T0 + 1), 1L), Row("a", ts(T0 + 1), 1L)))
      assert(out.map(r => (r.getString(0), r.getLong(2), r.getString(3))) === Seq(("a", 1L, "gold"), ("a", 1L, "gold")))
    } finally j.stop()
  }

  test("keys of every atomic type group exactly as Spark's groupBy does (null, -0.0, NaN included)") {
    for ((dataType, values) <- AtomicKeys) {
      val schema = StructType(Seq(StructField("k", dataType)))
      val df = spark.createDataFrame(spark.sparkContext.parallelize(values.map(v => Row(v))), schema)
      val sparkGroups = df.groupBy(col("k")).count().collect().map(_.getLong(1)).sorted.toSeq
      val encoder = KeyEncoding.encoder(schema)
      val ours = values.groupBy(v => encoder.encode(Row(v)).toSeq).values.map(_.size.toLong).toSeq.sorted
      assert(ours === sparkGroups, s"key type ${dataType.simpleString}")
    }
  }

  test("suppress: a struct key of every atomic type buffers one entry per distinct key and survives a restart") {
    val keyType = StructType(AtomicKeys.map { case (t, _) => StructField(t.typeName.replaceAll("[^a-z0-9]", "_"), t) })
    val schema =
      StructType(Seq(StructField("k", keyType), StructField("ts", TimestampType), StructField("value", LongType)))
    val first = Row.fromSeq(AtomicKeys.map(_._2.head))
    val second = Row.fromSeq(AtomicKeys.map(_._2(1)))
    val allNull = Row.fromSeq(AtomicKeys.map(_ => null))
    val d = suppressDriver(schema, Seq("k"), timeLimit(10))
    try {
      assert(d.step(
        Row(first, ts(T0), 1L),
        Row(second, ts(T0), 2L),
        Row(first, ts(T0 + 1), 3L),
        Row(allNull, ts(T0), 4L),
        Row(null, ts(T0), 5L)
      ) === Nil)
      d.restart()
      val out = d.step(Row(second, ts(T0 + 20), 6L))
      assert(out.map(_.getLong(2)).sorted === Seq(3L, 4L, 5L, 6L))
      assert(out.find(_.getLong(2) == 3L).get.getStruct(0) === first)
    } finally d.stop()
  }

  test("key types Spark cannot group by are refused when the operator is built") {
    for (t <- Seq(MapType(StringType, IntegerType), CalendarIntervalType) ++ Variant.dataType) {
      val schema = StructType(Seq(StructField("k", t), StructField("ts", TimestampType)))
      val d = TestDriver(spark, schema, "ts")
      val e = intercept[IllegalArgumentException](d.input.transform(Suppress("k", "ts", timeLimit(1))))
      assert(
        e.getMessage.contains(s"key column 'k' has type ${t.simpleString}, which cannot be a grouping key"),
        e.getMessage
      )
    }
  }

  test("values with nested types and nulls come back exactly after being buffered across a restart") {
    val inner =
      StructType(Seq(StructField("a", IntegerType), StructField("tags", MapType(StringType, ArrayType(DoubleType)))))
    val schema = StructType(Seq(
      StructField("key", StringType),
      StructField("ts", TimestampType),
      StructField("items", ArrayType(inner)),
      StructField("attrs", MapType(StringType, StringType)),
      StructField("point", StructType(Seq(StructField("x", DoubleType), StructField("label", StringType)))),
      StructField("amount", DecimalType(20, 4)),
      StructField("day", DateType),
      StructField("raw", BinaryType)
    ))
    val rows = Seq(
      Row(
        "a",
        ts(T0),
        Seq(Row(1, Map("x" -> Seq(1.5, Double.NaN))), null, Row(null, null)),
        Map("k" -> null, "j" -> "v"),
        Row(null, "p"),
        new java.math.BigDecimal("12.3400"),
        java.sql.Date.valueOf("2024-02-29"),
        Array[Byte](0, 1, -1)
      ),
      Row("b", ts(T0), Seq.empty, Map.empty, null, null, null, null),
      Row(
        "c",
        ts(T0),
        null,
        null,
        Row(Double.NegativeInfinity, null),
        new java.math.BigDecimal("-0.0001"),
        null,
        Array.emptyByteArray
      )
    )
    val d = suppressDriver(schema, Seq("key"), timeLimit(10))
    try {
      assert(d.step(rows: _*) === Nil)
      d.restart()
      val out = d.step(Row("tick", ts(T0 + 10), null, null, null, null, null, null))
      assert(out.filter(_.getString(0) != "tick").map(FileSinkRun.canonical).sorted === rows.map(
        FileSinkRun.canonical
      ).sorted)
    } finally d.stop()
  }

  test("a record larger than the whole byte bound: emitted at once when eager, a clear error when strict") {
    val big = "x" * 1000
    val schema = StructType(Seq(
      StructField("key", StringType),
      StructField("ts", TimestampType),
      StructField("value", StringType)
    ))
    val eager = onePartition(suppressDriver(
      schema,
      Seq("key"),
      Suppressed.untilTimeLimit(ms(10), BufferConfig.maxBytes(200).emitEarlyWhenFull()).withName("eager")
    ))
    try {
      assert(eager.step(Row("small", ts(T0), "s")) === Nil)
      val out = eager.step(Row("big", ts(T0 + 1), big))
      assert(
        out.map(_.getString(0)).toSet === Set("small", "big"),
        "the oldest first, then the oversized record itself"
      )
      assert(Metrics.forQuery(eager.streamingQuery)("eager")("suppression-buffer-count-current") === 0.0)
    } finally eager.stop()
    val strict = onePartition(suppressDriver(
      schema,
      Seq("key"),
      Suppressed.untilTimeLimit(ms(10), BufferConfig.maxBytes(200).shutDownWhenFull()).withName("strict")
    ))
    try {
      val m = messages(intercept[Exception](strict.step(Row("big", ts(T0), big))))
      assert(m.contains("strict buffer exceeded its max capacity. Currently [1/") && m.contains("/200] bytes"), m)
    } finally strict.stop()
  }

  test("a zero time limit or grace period forwards at once") {
    val d = suppressDriver(updates, Seq("key"), timeLimit(0))
    try assert(d.step(Row("a", ts(T0), 1L), Row("a", ts(T0), 2L)).map(_.getLong(2)) === Seq(1L, 2L))
    finally d.stop()
  }

  test("every configuration error is an IllegalArgumentException at build time naming the parameter and the fix") {
    val d = TestDriver(spark)
    val stream = d.addInput("s", updates, "ts", "0 seconds")
    val table = d.addInput(
      "t",
      StructType(Seq(
        StructField("key", StringType),
        StructField("at", TimestampType),
        StructField("value", LongType)
      )),
      null,
      null
    )
    val unwatermarked = MemoryStream[Row](org.apache.spark.sql.Encoders.row(updates), spark.sqlContext).toDF()
    val batch = spark.createDataFrame(spark.sparkContext.emptyRDD[Row], updates)
    val versioned = ChangelogTable.versioned(table.withColumnRenamed("value", "tier"), "at", ms(100))
    val cases: Seq[(String, () => Any, String)] = Seq(
      (
        "negative time limit",
        () => Suppressed.untilTimeLimit(ms(-1), BufferConfig.unbounded()),
        "timeToWaitForMoreEvents must be >= 0"
      ),
      (
        "negative grace (suppress)",
        () =>
          stream.transform(Suppress(Seq("key"), "ts", Suppressed.untilWindowCloses(BufferConfig.unbounded()))
            .withWindow(WindowColumns.startEnd("ts", "ts")).withGrace(ms(-5))),
        "grace must be >= 0"
      ),
      ("negative grace (join)", () => Joined.left().withGracePeriod(ms(-1)), "gracePeriod must be >= 0"),
      (
        "negative history retention",
        () => ChangelogTable.versioned(table, "at", ms(-1)),
        "historyRetention must be >= 0"
      ),
      ("negative bound", () => BufferConfig.maxBytes(-1), "maxBytes must be >= 0"),
      (
        "null duration",
        () => Suppressed.untilTimeLimit(null, BufferConfig.unbounded()),
        "timeToWaitForMoreEvents must not be null"
      ),
      (
        "grace > history retention",
        () =>
          stream.transform(StreamTableJoin(
            "key",
            "ts",
            ChangelogTable.versioned(table.withColumnRenamed("value", "tier"), "at", ms(10)),
            Joined.left().withGracePeriod(ms(11))
          )),
        "History retention must be at least grace period"
      ),
      (
        "grace without versioned table",
        () =>
          stream.transform(StreamTableJoin(
            "key",
            "ts",
            ChangelogTable.nonVersioned(table.withColumnRenamed("value", "tier"), "at"),
            Joined.left().withGracePeriod(ms(1))
          )),
        "KTable must be versioned"
      ),
      (
        "no watermark",
        () => unwatermarked.transform(Suppress("key", "ts", timeLimit(1))),
        "has no event-time watermark"
      ),
      (
        "missing key column",
        () => stream.transform(Suppress("user", "ts", timeLimit(1))),
        "key 'user' is not a column of the input"
      ),
      (
        "missing timestamp column",
        () => stream.transform(Suppress("key", "time", timeLimit(1))),
        "timestamp 'time' is not a column"
      ),
      (
        "key listed twice",
        () => stream.transform(Suppress(Seq("key", "KEY"), "ts", timeLimit(1))),
        "key lists 'key' more than once"
      ),
      (
        "key is the timestamp",
        () => stream.transform(Suppress(Seq("ts"), "ts", timeLimit(1))),
        "key column 'ts' is also the event-time"
      ),
      (
        "ambiguous column",
        () => stream.select(col("*"), lit("x").as("Key")).transform(Suppress("KEY", "ts", timeLimit(1))),
        "is ambiguous"
      ),
      (
        "reserved column name (suppress)",
        () => stream.withColumn("__spark_suppress_key", lit(1)).transform(Suppress("key", "ts", timeLimit(1))),
        "names starting with '__spark_suppress_' are reserved"
      ),
      (
        "reserved column name (join)",
        () =>
          stream.withColumn("__spark_suppress_side", lit(1)).transform(StreamTableJoin(
            "key",
            "ts",
            versioned,
            Joined.left()
          )),
        "names starting with '__spark_suppress_' are reserved"
      ),
      (
        "join output clash",
        () =>
          stream.transform(StreamTableJoin("key", "ts", ChangelogTable.versioned(table, "at", ms(100)), Joined.left())),
        "the output would have two columns named 'value'"
      ),
      (
        "join key types differ",
        () =>
          stream.transform(StreamTableJoin(
            "key",
            "ts",
            ChangelogTable.versioned(
              table.withColumn("key", col("value")).withColumnRenamed("value", "tier"),
              "at",
              ms(100)
            ),
            Joined.left()
          )),
        "is string on the stream side but bigint on the table side"
      ),
      (
        "static input (suppress)",
        () => batch.transform(Suppress("key", "ts", timeLimit(1))),
        "is not a streaming DataFrame"
      ),
      (
        "static input (join)",
        () => batch.transform(StreamTableJoin("key", "ts", versioned, Joined.left())),
        "the stream is not a streaming DataFrame"
      ),
      (
        "static table (join)",
        () =>
          stream.transform(StreamTableJoin(
            "key",
            "ts",
            ChangelogTable.versioned(
              batch.withColumnRenamed("value", "tier").withColumnRenamed("ts", "at"),
              "at",
              ms(1)
            ),
            Joined.left()
          )),
        "the table changelog is not a streaming DataFrame"
      ),
      (
        "untilWindowCloses without a window",
        () =>
          stream.transform(Suppress(
            Seq("key"),
            "ts",
            Suppressed.untilWindowCloses(BufferConfig.unbounded())
          ).withGrace(ms(1))),
        "needs windowed input"
      ),
      (
        "spill to disk without RocksDB",
        () =>
          stream.transform(Suppress(
            "key",
            "ts",
            Suppressed.untilTimeLimit(ms(1), BufferConfig.unbounded().spillToDisk())
          )),
        "spark.sql.streaming.stateStore.providerClass"
      )
    )
    for ((what, build, expected) <- cases) {
      val e = intercept[IllegalArgumentException](build())
      assert(e.getMessage.contains(expected), s"$what: ${e.getMessage}")
    }
  }

  test("the Spark and Scala version check compares minor versions and says what to use") {
    val builtSpark = RuntimeCompatibility.builtForSpark
    val builtScala = RuntimeCompatibility.builtForScala
    def minor(v: String) = v.split('.').take(2).mkString(".")
    assert(RuntimeCompatibility.incompatibility(builtSpark, builtScala) === None)
    assert(
      RuntimeCompatibility.incompatibility(minor(builtSpark) + ".9", minor(builtScala) + ".0") === None,
      "patch versions do not matter"
    )
    val otherSpark = RuntimeCompatibility.incompatibility("9.9.1", builtScala).get
    assert(
      otherSpark.contains(s"built for Spark ${minor(builtSpark)}.x") && otherSpark.contains("runs Spark 9.9.1"),
      otherSpark
    )
    val scala = if (minor(builtScala) == "2.13") "2.12.18" else "2.13.8"
    val otherScala = RuntimeCompatibility.incompatibility(builtSpark, scala).get
    assert(otherScala.contains(s"on Scala ${minor(builtScala)}") && otherScala.contains(s"on Scala $scala"), otherScala)
    RuntimeCompatibility.check() // this JVM: the versions the jar was built for
  }
}

object BadInputSuite {

  /** Every Spark atomic type usable as a key, each with distinct values, values Spark groups together, and null. */
  val AtomicKeys: Seq[(DataType, Seq[Any])] = Seq(
    BooleanType -> Seq(true, false, true, null),
    ByteType -> Seq(1.toByte, (-1).toByte, Byte.MinValue, 1.toByte, null),
    ShortType -> Seq(1.toShort, (-1).toShort, Short.MaxValue, null),
    IntegerType -> Seq(1, -1, Int.MinValue, 0, 1, null),
    LongType -> Seq(1L, -1L, Long.MaxValue, Long.MinValue, 1L, null),
    FloatType -> Seq(1.5f, -0.0f, 0.0f, Float.NaN, Float.NaN, Float.NegativeInfinity, null),
    DoubleType -> Seq(1.5, -0.0, 0.0, Double.NaN, -Double.NaN, Double.MinPositiveValue, null),
    DecimalType(10, 2) -> Seq(
      new java.math.BigDecimal("1.50"),
      new java.math.BigDecimal("1.5"),
      new java.math.BigDecimal("-1.50"),
      null
    ),
    StringType -> Seq("a", "", "a\u0000b", "a", "é", null),
    BinaryType -> Seq(Array[Byte](1, 0), Array[Byte](1), Array[Byte](1, 0), Array.emptyByteArray, null),
    DateType -> Seq(
      java.sql.Date.valueOf("2024-01-01"),
      java.sql.Date.valueOf("1969-12-31"),
      java.sql.Date.valueOf("2024-01-01"),
      null
    ),
    TimestampType -> Seq(new Timestamp(1000L), new Timestamp(-1000L), new Timestamp(1000L), null),
    TimestampNTZType -> Seq(LocalDateTime.of(2024, 1, 1, 0, 0), LocalDateTime.of(1900, 1, 1, 0, 0, 0, 1000), null),
    DayTimeIntervalType() -> Seq(Duration.ofSeconds(1), Duration.ofMillis(1000), Duration.ofSeconds(-5), null),
    YearMonthIntervalType() -> Seq(Period.ofYears(1).plusMonths(1), Period.ofMonths(-1), Period.ofMonths(13), null)
  )
}
