package io.github.sparksuppress.spark.chain

import java.sql.Timestamp
import java.time.Duration

import scala.collection.mutable

import com.fasterxml.jackson.databind.JsonNode
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.functions.{col, count, last, lit}
import org.apache.spark.sql.types._

import io.github.sparksuppress.api._
import io.github.sparksuppress.spark.SparkSessionSuite
import io.github.sparksuppress.testing.TestDriver
import io.github.sparksuppress.testkit.Vectors

/**
 * Chains of this library's operators in ONE streaming query, through the Scala API: Kafka's chain vectors one record
 * per micro-batch, and a three-operator chain stopped and restarted from its checkpoint, which must emit exactly what
 * an uninterrupted run emits. Runs once per state store provider.
 */
abstract class ChainSuite(provider: Option[String]) extends SparkSessionSuite {

  override protected def extraConf: Map[String, String] =
    Map("spark.sql.shuffle.partitions" -> "1") ++ provider.map("spark.sql.streaming.stateStore.providerClass" -> _)

  private val schema = StructType(Seq(
    StructField("key", StringType),
    StructField("ts", TimestampType),
    StructField("value", StringType),
    StructField("deleted", BooleanType)
  ))

  private def vector(id: String): JsonNode =
    Vectors.familyIn(Vectors.chainsDirectory, "chains.json").find(_.get("id").asText() == id).get

  private def row(r: JsonNode): Row =
    Row(
      r.get("key").asText(),
      new Timestamp(r.get("ts").asLong()),
      Vectors.textOrNull(r.get("value")),
      r.get("value").isNull
    )

  /** What each step emitted, as (key, window start, Kafka window end or -1, value, ts), sorted within the step. */
  private def run(
      driver: TestDriver,
      v: JsonNode,
      kafkaEnd: Row => Long,
      restartAfter: Set[Int] = Set.empty
  ): Map[Int, Seq[String]] = {
    val out = mutable.Map.empty[Int, Seq[String]]
    Vectors.array(v.get("input")).foreach { r =>
      val seq = r.get("seq").asInt()
      val rows = driver.step(row(r)) ++ (if (restartAfter(seq)) { driver.restart(); driver.advance() }
                                         else Nil)
      val rendered = rows.map { o =>
        val window = if (o.schema.fieldNames.contains("window"))
          s"${o.getStruct(o.fieldIndex("window")).getTimestamp(0).getTime},${kafkaEnd(o)}"
        else "-"
        val value = o.get(o.fieldIndex("value"))
        s"${o.getString(0)}@$window=$value@${o.getTimestamp(o.fieldIndex("ts")).getTime}"
      }.sorted
      if (rendered.nonEmpty) out(seq) = rendered
    }
    out.toMap
  }

  private def expected(v: JsonNode): Map[Int, Seq[String]] =
    Vectors.array(v.get("expected")).groupBy(_.get("after_seq").asInt()).map { case (seq, os) =>
      seq -> os.map { o =>
        val window =
          if (o.has("window_start")) s"${o.get("window_start").asLong()},${o.get("window_end").asLong()}" else "-"
        s"${o.get("key").asText()}@$window=${Vectors.textOrNull(o.get("value"))}@${o.get("ts").asLong()}"
      }.sorted
    }

  private def timeEnd(o: Row): Long = o.getStruct(o.fieldIndex("window")).getTimestamp(1).getTime

  test(
    "chain.c1.000: aggregate_windowed(onWindowUpdate, count) -> suppress(untilWindowCloses) in one query, as Kafka"
  ) {
    val v = vector("chain.c1.000")
    val driver = TestDriver(spark, schema, "ts")
    val counts = driver.input.transform(AggregateWindowed(
      Seq("key"),
      "ts",
      TimeWindows.ofSizeAndGrace(Duration.ofMillis(8), Duration.ofMillis(3)),
      Seq(count(lit(1)).as("value")),
      EmitStrategy.onWindowUpdate()
    ))
    val finals = counts.transform(Suppress(Seq("key"), "ts", Suppressed.untilWindowCloses(BufferConfig.unbounded())))
    driver.start(finals)
    try assert(run(driver, v, timeEnd) === expected(v))
    finally driver.stop()
  }

  test("chain.c2.001: aggregate(reduce: latest) -> suppress(untilTimeLimit 1 ms, 3 records, emit early), as Kafka") {
    val v = vector("chain.c2.001")
    val driver = TestDriver(spark, schema, "ts")
    val latest = driver.input.transform(Aggregate(Seq("key"), "ts", Seq(last("value").as("value"))))
    val limited = latest.transform(Suppress(
      Seq("key"),
      "ts",
      Suppressed.untilTimeLimit(Duration.ofMillis(1), BufferConfig.maxRecords(3).emitEarlyWhenFull())
    ))
    driver.start(limited)
    try assert(run(driver, v, timeEnd) === expected(v))
    finally driver.stop()
  }

  test(
    "chain.c5.003: a table's changelog -> suppress(untilTimeLimit) -> aggregate_windowed(count), tombstones " +
      "counted, as Kafka"
  ) {
    val v = vector("chain.c5.003")
    val driver = TestDriver(spark, schema, "ts")
    val released = driver.input.transform(Suppress(
      Seq("key"),
      "ts",
      Suppressed.untilTimeLimit(Duration.ofMillis(2), BufferConfig.unbounded())
    ).withTombstone("deleted"))
    val counts = released.transform(AggregateWindowed(
      Seq("key"),
      "ts",
      TimeWindows.ofSizeAndGrace(Duration.ofMillis(7), Duration.ofMillis(2)),
      Seq(count(lit(1)).as("value")),
      EmitStrategy.onWindowUpdate()
    ))
    driver.start(counts)
    try assert(run(driver, v, timeEnd) === expected(v))
    finally driver.stop()
  }

  /** suppress(table, untilTimeLimit) -> aggregate_windowed(onWindowUpdate) -> suppress(untilWindowCloses). */
  private def threeOperators(input: DataFrame): DataFrame = {
    val released = input.transform(Suppress(
      Seq("key"),
      "ts",
      Suppressed.untilTimeLimit(Duration.ofMillis(3), BufferConfig.unbounded())
    ).withTombstone("deleted"))
    val counts = released.transform(AggregateWindowed(
      Seq("key"),
      "ts",
      TimeWindows.ofSizeAndGrace(Duration.ofMillis(10), Duration.ofMillis(2)),
      Seq(count(lit(1)).as("value")),
      EmitStrategy.onWindowUpdate()
    ))
    counts.transform(Suppress(Seq("key"), "ts", Suppressed.untilWindowCloses(BufferConfig.unbounded())))
  }

  test("a 3-operator chain stopped and restarted from its checkpoint emits what an uninterrupted run emits") {
    val random = new scala.util.Random(13)
    var t = 0L
    val records = (0 until 40).map { i =>
      t += random.nextInt(4)
      val ts = math.max(0L, t - random.nextInt(3)) // some out of order
      Row(s"k${random.nextInt(3)}", new Timestamp(ts), s"v$i", random.nextInt(8) == 0)
    }
    def feed(restarts: Set[Int]): Seq[Seq[String]] = {
      val driver = TestDriver(spark, schema, "ts")
      driver.start(threeOperators(driver.input))
      try records.zipWithIndex.map { case (r, i) =>
          val rows = driver.step(r) ++ (if (restarts(i)) { driver.restart(); driver.advance() }
                                        else Nil)
          rows.map(_.toString).sorted
        }
      finally driver.stop()
    }
    val uninterrupted = feed(Set.empty)
    assert(
      uninterrupted.flatten.size >= 10,
      "the stream must produce final results for the comparison to mean something"
    )
    val restarted = feed(Set(3, 9, 17, 25, 33))
    assert(restarted === uninterrupted)
  }

  test(
    "join -> aggregate_windowed: a starved shard's order is released on the watermark and counted, unless the " +
      "join opts out"
  ) {
    val orders = StructType(Seq(StructField("customer", StringType), StructField("order_ts", TimestampType)))
    val tiers = StructType(Seq(
      StructField("customer", StringType),
      StructField("changed_at", TimestampType),
      StructField("tier", StringType)
    ))
    // alice and bob are in different shards of two (the Kafka-rule assertion below fails otherwise).
    def counted(joined: Joined): Seq[Seq[(String, Long, Long)]] = {
      spark.conf.set("spark.sql.shuffle.partitions", "2")
      val driver = TestDriver(spark)
      try {
        val o = driver.addInput("orders", orders, "order_ts", "0 seconds")
        val t = driver.addInput("tiers", tiers, null, null)
        driver.start(o
          .transform(StreamTableJoin(
            "customer",
            "order_ts",
            ChangelogTable.versioned(t, "changed_at", Duration.ofSeconds(60)),
            joined
          ))
          .transform(AggregateWindowed(
            Seq("customer"),
            "order_ts",
            TimeWindows.ofSizeWithNoGrace(Duration.ofMillis(1000)),
            Seq(count(lit(1)).as("n")),
            EmitStrategy.onWindowUpdate()
          )))
        def step(input: String, r: Row) = driver.stepInput(input, Seq(r))
          .map(o => (o.getString(0), o.getStruct(1).getTimestamp(0).getTime, o.getLong(2)))
        Seq(
          step("tiers", Row("alice", new Timestamp(0), "silver")),
          step("orders", Row("alice", new Timestamp(100))),
          step("orders", Row("bob", new Timestamp(200))),
          step("tiers", Row("zed", new Timestamp(0), "bronze")),
          step("orders", Row("bob", new Timestamp(300)))
        )
      } finally {
        driver.stop()
        spark.conf.set("spark.sql.shuffle.partitions", "1")
      }
    }
    assert(counted(Joined.left().withGracePeriod(Duration.ofMillis(10))) ===
      Seq(Nil, Nil, Nil, Seq(("alice", 0L, 1L)), Seq(("bob", 0L, 1L))))
    assert(
      counted(Joined.left().withGracePeriod(Duration.ofMillis(10)).withoutWatermarkRelease()) ===
        Seq(Nil, Nil, Nil, Nil, Seq(("bob", 0L, 1L))),
      "Kafka's rule: alice's order waits for an order of its own shard"
    )
  }

  test("a join with initial versions starts a chain: records join them from the first batch, also after a restart") {
    val orders = StructType(Seq(StructField("customer", StringType), StructField("order_ts", TimestampType)))
    val tiers = StructType(Seq(
      StructField("customer", StringType),
      StructField("changed_at", TimestampType),
      StructField("tier", StringType)
    ))
    val initial = spark.createDataFrame(
      java.util.Arrays.asList(
        Row("alice", new Timestamp(0), "silver"),
        Row("alice", new Timestamp(50), "gold"),
        Row("bob", new Timestamp(0), "bronze")
      ),
      tiers
    )
    val driver = TestDriver(spark)
    try {
      val o = driver.addInput("orders", orders, "order_ts", "0 seconds")
      val t = driver.addInput("tiers", tiers, null, null)
      driver.start(o
        .transform(StreamTableJoin(
          "customer",
          "order_ts",
          ChangelogTable.versioned(t, "changed_at", Duration.ofSeconds(60)).withInitialVersions(initial),
          Joined.left()
        ))
        .where(col("tier") =!= "bronze")
        .transform(Aggregate(Seq("customer"), "order_ts", Seq(count(lit(1)).as("n"), last("tier").as("tier")))))
      def order(c: String, ts: Long) =
        driver.stepInput("orders", Seq(Row(c, new Timestamp(ts)))).map(r =>
          (r.getString(0), r.getLong(1), r.getString(2))
        )
      // Versioned: the order at 40 joins alice's version valid then (silver), the one at 60 the later one (gold).
      assert(order("alice", 40) === Seq(("alice", 1L, "silver")))
      assert(order("bob", 45) === Nil, "bob's initial tier is bronze, filtered out")
      driver.restart()
      assert(order("alice", 60) === Seq(("alice", 2L, "gold")))
    } finally driver.stop()
  }
}

class ChainHdfsSuite extends ChainSuite(None)

class ChainRocksDbSuite
    extends ChainSuite(Some("org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"))
