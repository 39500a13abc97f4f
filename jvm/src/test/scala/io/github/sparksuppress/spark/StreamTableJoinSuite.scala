package io.github.sparksuppress.spark

import java.sql.Timestamp
import java.time.Duration

import org.apache.spark.sql.{DataFrame, Row}
import io.github.sparksuppress.shims.StreamingRuntime.MemoryStream
import org.apache.spark.sql.functions
import org.apache.spark.sql.functions.{col, sum}
import org.apache.spark.sql.types._

import io.github.sparksuppress.api._
import io.github.sparksuppress.testing.TestDriver
import io.github.sparksuppress.api.Metrics
import io.github.sparksuppress.spark.common.{KeyEncoding, ShardKeys}

class StreamTableJoinSuite extends SparkSessionSuite {

  private val orders = StructType(Seq(
    StructField("customer", StringType),
    StructField("order_ts", TimestampType),
    StructField("amount", LongType)
  ))
  private val tiers = StructType(Seq(
    StructField("customer", StringType),
    StructField("changed_at", TimestampType),
    StructField("tier", StringType),
    StructField("deleted", BooleanType)
  ))

  private def ts(ms: Long) = new Timestamp(ms)
  private def order(c: String, ms: Long, amount: Long = 1L) = Row(c, ts(ms), amount)
  private def tier(c: String, ms: Long, t: String) = Row(c, ts(ms), t, false)
  private def deletion(c: String, ms: Long) = Row(c, ts(ms), null, true)
  private def ms(n: Long) = Duration.ofMillis(n)

  /** (customer, order time, amount, tier) of joined rows. */
  private def out(rows: Seq[Row]): Seq[(String, Long, Long, String)] =
    rows.map(r => (r.getString(0), r.getTimestamp(1).getTime, r.getLong(2), r.getString(3)))

  private final class Join(val driver: TestDriver) {
    def order(rows: Row*): Seq[(String, Long, Long, String)] = out(driver.stepInput("orders", rows))
    def tier(rows: Row*): Seq[(String, Long, Long, String)] = out(driver.stepInput("tiers", rows))
    def metrics: Map[String, Double] = Metrics.forQuery(driver.streamingQuery).head._2
    def stop(): Unit = driver.stop()
  }

  /** A driver with orders and tier changes as inputs (no watermark: the join needs none), running `join`. */
  private def join(table: DataFrame => ChangelogTable, joined: Joined): Join = {
    val d = TestDriver(spark)
    val o = d.addInput("orders", orders, null, null)
    val t = d.addInput("tiers", tiers, null, null)
    d.start(o.transform(StreamTableJoin("customer", "order_ts", table(t).withTombstone("deleted"), joined)))
    new Join(d)
  }

  private def versioned(retention: Long): DataFrame => ChangelogTable =
    ChangelogTable.versioned(_, "changed_at", ms(retention))

  /** Cross-key stream time is per shard, as Kafka's is per task; one shard makes it cover every key. */
  private def onePartition[T](body: => T): T = {
    spark.conf.set("spark.sql.shuffle.partitions", "1")
    try body
    finally spark.conf.set("spark.sql.shuffle.partitions", "2")
  }

  test("with a grace period, orders wait and then join the tier valid at their own time, even if it came late") {
    val j = onePartition(join(versioned(60000), Joined.left().withGracePeriod(ms(30))))
    try {
      assert(j.tier(tier("alice", 0, "silver")) === Nil)
      assert(j.order(order("alice", 100, 7)) === Nil, "buffered for 30 ms of stream time")
      assert(j.tier(tier("alice", 90, "gold")) === Nil, "a late tier change: table updates never emit")
      assert(j.order(order("bob", 120)) === Nil)
      assert(j.order(order("bob", 130)) === Seq(("alice", 100L, 7L, "gold")), "stream time 130 releases ts <= 100")
      assert(j.order(order("carol", 200)) === Seq(("bob", 120L, 1L, null), ("bob", 130L, 1L, null)))
    } finally j.stop()
  }

  // Its table side is a struct without fields, which Spark 3.5 builds only when it is typed nullable (Structs).
  test("a table without value columns (keys and time only) joins; the output has the stream's columns") {
    val d = TestDriver(spark)
    try {
      val o = d.addInput("orders", orders, null, null)
      val members = d.addInput(
        "members",
        StructType(Seq(StructField("customer", StringType), StructField("since", TimestampType))),
        null,
        null
      )
      d.start(o.transform(StreamTableJoin(
        "customer",
        "order_ts",
        ChangelogTable.nonVersioned(members, "since"),
        Joined.inner()
      )))
      assert(d.outputSchema.fieldNames.toSeq === Seq("customer", "order_ts", "amount"))
      assert(d.stepInput("members", Seq(Row("alice", ts(0)))) === Nil)
      assert(d.stepInput("orders", Seq(order("alice", 10), order("bob", 10))).map(_.getString(0)) === Seq("alice"))
    } finally d.stop()
  }

  test("a join on its own reads TIMESTAMP_NTZ event times and forwards them as they are") {
    def schema(fields: (String, DataType)*) = StructType(fields.map { case (n, t) => StructField(n, t) })
    val at = (ms: Long) => java.time.LocalDateTime.of(2024, 1, 1, 0, 0).plusNanos(ms * 1000000L)
    onePartition {
      val d = TestDriver(spark)
      try {
        val o = d.addInput("orders", schema("customer" -> StringType, "order_ts" -> TimestampNTZType), null, null)
        val t =
          d.addInput(
            "tiers",
            schema("customer" -> StringType, "at" -> TimestampNTZType, "tier" -> StringType),
            null,
            null
          )
        d.start(o.transform(StreamTableJoin(
          "customer",
          "order_ts",
          ChangelogTable.versioned(t, "at", ms(60000)),
          Joined.left().withGracePeriod(ms(10))
        )))
        assert(d.outputSchema("order_ts").dataType === TimestampNTZType)
        assert(d.stepInput("tiers", Seq(Row("alice", at(0), "silver"), Row("alice", at(50), "gold"))) === Nil)
        assert(d.stepInput("orders", Seq(Row("alice", at(40)))) === Nil, "waits 10 ms of stream time")
        assert(d.stepInput("orders", Seq(Row("bob", at(60)))) === Seq(Row("alice", at(40), "silver")))
      } finally d.stop()
    }
  }

  test("on its own the join keeps its table per key: a batch rewrites only the table keys it touches") {
    val j = join(versioned(60000), Joined.left().withGracePeriod(ms(30)))
    try {
      j.tier(tier("alice", 0, "silver"), tier("bob", 0, "gold"), tier("carol", 0, "gold"))
      val ops = j.driver.streamingQuery.lastProgress.stateOperators
      assert(ops.length === 2, "the shards' clocks and grace buffers, and the table's keys")
      val table = ops.indexWhere(_.numRowsTotal == 3L)
      assert(table >= 0, s"one state row per table key: ${ops.map(_.numRowsTotal).mkString(", ")}")
      j.tier(tier("alice", 10, "gold"))
      assert(j.driver.streamingQuery.lastProgress.stateOperators(table).numRowsUpdated === 1L)
    } finally j.stop()
  }

  /** A customer whose orders go to the other of two shards than alice's. */
  private def otherShardThanAlice: String = {
    val encoder = KeyEncoding.encoder(StructType(Seq(StructField("customer", StringType))))
    def shard(c: String) = ShardKeys.shardOf(encoder.encode(Row(c)), 2)
    Iterator.from(0).map(i => s"c$i").find(shard(_) != shard("alice")).get
  }

  /** Two shards (two state partitions), orders with a 0-second watermark. */
  private def watermarkedJoin(joined: Joined): Join = {
    val d = TestDriver(spark)
    val o = d.addInput("orders", orders, "order_ts", "0 seconds")
    val t = d.addInput("tiers", tiers, null, null)
    d.start(o.transform(StreamTableJoin(
      "customer",
      "order_ts",
      ChangelogTable.versioned(t, "changed_at", ms(60000)).withTombstone("deleted"),
      joined
    )))
    new Join(d)
  }

  test("a buffered order leaves once the watermark passes it, though its shard gets no more orders (default)") {
    val other = otherShardThanAlice
    val j = watermarkedJoin(Joined.left().withGracePeriod(ms(10)))
    try {
      assert(j.tier(tier("alice", 0, "silver")) === Nil)
      assert(j.order(order("alice", 100, 7)) === Nil)
      assert(j.order(order(other, 200)) === Nil, "Kafka's rule: stream time 200 is in the other shard")
      // No more orders: by the end of the next micro-batch (a table write), the watermark of 200 has released
      // alice's order (100 + 10 <= 200), not the other's (200 + 10 > 200).
      assert(j.tier(tier("zed", 0, "bronze")) === Seq(("alice", 100L, 7L, "silver")))
      assert(j.order(order(other, 300)) === Seq((other, 200L, 1L, null)), "alice's order is not joined twice")
      assert(j.metrics("grace-buffer-count-current") === 1.0, "only the order at 300 waits")
    } finally j.stop()
  }

  test("withoutWatermarkRelease keeps Kafka's rule: the starved shard's order waits for an order of its own shard") {
    val other = otherShardThanAlice
    val j = watermarkedJoin(Joined.left().withGracePeriod(ms(10)).withoutWatermarkRelease())
    try {
      j.tier(tier("alice", 0, "silver"))
      j.order(order("alice", 100, 7))
      assert(j.order(order(other, 200)) === Nil)
      assert(j.tier(tier("zed", 0, "bronze")) === Nil)
      assert(j.order(order(other, 300)) === Seq((other, 200L, 1L, null)))
      assert(j.order(order("alice", 150, 8)) === Seq(("alice", 100L, 7L, "silver")), "released by its own shard's time")
    } finally j.stop()
  }

  test(
    "releasing on the watermark needs no timer: an availableNow query over files finishes, the starved order joined"
  ) {
    val dir = tempDir("join-available-now")
    val other = otherShardThanAlice
    // One file per micro-batch: alice's order, then two orders of the other shard.
    Seq(order("alice", 100, 7), order(other, 200), order(other, 300)).zipWithIndex.foreach { case (r, i) =>
      spark.createDataFrame(java.util.Arrays.asList(r), orders).write.parquet(s"$dir/orders/$i")
    }
    spark.createDataFrame(java.util.Arrays.asList(tier("alice", 0, "silver")), tiers).write.parquet(s"$dir/tiers/0")
    val o = spark.readStream.schema(orders).option("maxFilesPerTrigger", 1).option("recursiveFileLookup", "true")
      .parquet(s"$dir/orders").withWatermark("order_ts", "0 seconds")
    val t = spark.readStream.schema(tiers).option("recursiveFileLookup", "true").parquet(s"$dir/tiers")
    val q = o.transform(StreamTableJoin(
      "customer",
      "order_ts",
      ChangelogTable.versioned(t, "changed_at", ms(60000)).withTombstone("deleted"),
      Joined.left().withGracePeriod(ms(10))
    ))
      .writeStream.format("memory").queryName("join_available_now").option("checkpointLocation", s"$dir/checkpoint")
      .trigger(org.apache.spark.sql.streaming.Trigger.AvailableNow()).start()
    try {
      assert(q.awaitTermination(120000), "the availableNow query finished")
      assert(q.exception.isEmpty)
      // The third micro-batch releases alice's order on the watermark (200, from the second), and the other's 200
      // on its shard's own stream time (300); the order at 300 still waits.
      assert(out(spark.table("join_available_now").collect().toSeq).sortBy(_._2) ===
        Seq(("alice", 100L, 7L, "silver"), (other, 200L, 1L, null)))
    } finally q.stop()
  }

  test("without a grace period the same input joins at once and sees the old tier (as-of lookup)") {
    val j = join(versioned(60000), Joined.left())
    try {
      assert(j.tier(tier("alice", 0, "silver")) === Nil)
      assert(j.order(order("alice", 100, 7)) === Seq(("alice", 100L, 7L, "silver")))
      assert(j.tier(tier("alice", 90, "gold")) === Nil)
      assert(j.order(order("alice", 95, 8)) === Seq(("alice", 95L, 8L, "gold")), "as of 95: the version from 90")
      assert(j.order(order("alice", 50, 9)) === Seq(("alice", 50L, 9L, "silver")), "as of 50: the version from 0")
    } finally j.stop()
  }

  test("buffered records leave in timestamp order per key; a record later than the grace is joined at once") {
    val j = onePartition(join(versioned(1000), Joined.inner().withGracePeriod(ms(10))))
    try {
      j.tier(tier("a", 0, "t0"))
      assert(j.order(order("a", 20, 1), order("a", 15, 2), order("a", 18, 3)) === Nil)
      assert(j.order(order("a", 5, 4)) === Seq(("a", 5L, 4L, "t0")), "5 < 20 - 10: late, joined immediately")
      assert(j.order(order("a", 28, 5)) === Seq(("a", 15L, 2L, "t0"), ("a", 18L, 3L, "t0")))
      assert(j.metrics("late-records-joined-total") === 1.0)
      assert(j.metrics("grace-buffer-count-current") === 2.0)
    } finally j.stop()
  }

  test("tombstones hide older versions: inner joins drop, left joins emit null table columns") {
    for ((joined, expected) <- Seq(Joined.inner() -> Nil, Joined.left() -> Seq(("a", 12L, 1L, null)))) {
      val j = join(versioned(1000), joined)
      try {
        j.tier(tier("a", 0, "t0"))
        j.tier(deletion("a", 10))
        assert(j.order(order("a", 12)) === expected)
        assert(j.order(order("a", 8)) === Seq(("a", 8L, 1L, "t0")), "before the deletion the old version holds")
      } finally j.stop()
    }
  }

  test("history retention: writes older than observed - retention are rejected and counted; old lookups expire") {
    val j = onePartition(join(versioned(5), Joined.left()))
    try {
      j.tier(tier("k", 0, "a"))
      j.tier(tier("k", 10, "b"))
      j.tier(tier("k2", 3, "x"))
      assert(j.metrics("expired-table-writes-total") === 1.0, "k2@3 < 10 - 5 across keys")
      assert(j.order(order("k2", 12)) === Seq(("k2", 12L, 1L, null)))
      assert(j.order(order("k", 5)) === Seq(("k", 5L, 1L, "a")), "5 >= 10 - 5: inside the history")
      assert(j.order(order("k", 4)) === Seq(("k", 4L, 1L, null)), "expired, and the latest version is newer")
      assert(j.metrics("dropped-records-total") === 1.0)
    } finally j.stop()
  }

  test("inner joins drop records with a null key or value (counted); left joins keep a null key") {
    for (
      (joined, expected, dropped) <- Seq(
        (Joined.inner(), Seq(("a", 1L, 1L, "t")), 2.0),
        (Joined.left(), Seq(("a", 1L, 1L, "t"), (null, 2L, 2L, null)), 1.0)
      )
    ) {
      val j = join(versioned(100), joined)
      try {
        j.tier(tier("a", 0, "t"), Row(null, ts(0), "n", false))
        val emitted = j.order(Row("a", ts(1), 1L), Row(null, ts(2), 2L), Row("a", ts(3), null))
        assert(emitted.sortBy(_._2) === expected)
        assert(j.metrics("dropped-null-key-or-value-total") === dropped)
        assert(j.metrics("dropped-null-table-key-total") === 1.0)
      } finally j.stop()
    }
  }

  test("a non-versioned table joins the latest write in arrival order, whatever the timestamps") {
    val j = join(ChangelogTable.nonVersioned(_, "changed_at"), Joined.inner())
    try {
      j.tier(tier("a", 1000, "new"))
      j.tier(tier("a", 0, "older-timestamp-but-later"))
      assert(j.order(order("a", 5)) === Seq(("a", 5L, 1L, "older-timestamp-but-later")))
      j.tier(deletion("a", 0))
      assert(j.order(order("a", 6)) === Nil)
    } finally j.stop()
  }

  test("a restart from the checkpoint emits every buffered record once, after the restart") {
    val j = join(versioned(1000), Joined.left().withGracePeriod(ms(10)).withName("durable-join"))
    try {
      j.tier(tier("a", 0, "t0"), tier("b", 0, "u0"))
      assert(j.order(order("a", 1, 1), order("b", 2, 2), order("a", 3, 3)) === Nil)
      j.tier(tier("a", 2, "t2"))
      j.driver.restart()
      assert(out(j.driver.advance()) === Nil, "nothing is replayed")
      val released = j.order(order("a", 40, 4), order("b", 40, 5))
      assert(released.sortBy(r => (r._2, r._1)) === Seq(("a", 1L, 1L, "t0"), ("b", 2L, 2L, "u0"), ("a", 3L, 3L, "t2")))
      assert(j.order(order("a", 60, 6), order("b", 60, 7)).map(_._3).sorted === Seq(4L, 5L))
    } finally j.stop()
  }

  test("initial versions seed the table (and its observed stream time) when the query starts") {
    val seed = spark.createDataFrame(
      java.util.Arrays.asList(
        tier("a", 0, "seed-a0"),
        tier("a", 100, "seed-a100"),
        tier("b", 50, "seed-b"),
        tier(null, 70, "no key")
      ),
      tiers
    )
    val j = onePartition(join(t => versioned(20)(t).withInitialVersions(seed), Joined.inner()))
    try {
      assert(j.order(order("a", 99)) === Seq(("a", 99L, 1L, "seed-a0")), "99 >= 100 - 20: inside the history")
      assert(j.order(order("a", 70)) === Nil, "70 < 100 - 20: expired, and a's latest version (100) is newer")
      assert(j.order(order("b", 60)) === Seq(("b", 60L, 1L, "seed-b")), "expired, but b's latest version is older")
      j.tier(tier("b", 10, "too-old"))
      assert(j.metrics("expired-table-writes-total") === 1.0, "the seed moved the table's time to 100")
      assert(
        j.metrics("dropped-null-table-key-total") === 1.0,
        "a seed row without a key is dropped, as in the changelog"
      )
    } finally j.stop()
  }

  test("watermarks on the inputs drop nothing: rows below them are still joined, by Kafka's rules") {
    val d = TestDriver(spark)
    val o = d.addInput("orders", orders, "order_ts", "0 seconds")
    val t = d.addInput("tiers", tiers, "changed_at", "0 seconds")
    d.start(o.transform(StreamTableJoin(
      "CUSTOMER",
      "Order_TS",
      ChangelogTable.versioned(t, "changed_at", ms(1000)).withTombstone("deleted"),
      Joined.inner().withGracePeriod(ms(10))
    )))
    val j = new Join(d)
    try {
      j.tier(tier("a", 0, "t0"))
      assert(j.order(order("a", 100)) === Nil)
      j.tier(tier("a", 50, "t50"))
      assert(j.order(order("a", 60, 2)) === Seq(("a", 60L, 2L, "t50")), "below both watermarks, later than the grace")
      assert(j.order(order("a", 95, 3)) === Nil, "below the watermark but within the grace: buffered")
      assert(j.order(order("a", 110, 4)) === Seq(("a", 95L, 3L, "t50"), ("a", 100L, 1L, "t50")))
    } finally j.stop()
  }

  test("the output has the stream's columns, then the table's value columns, with the stream's timestamp") {
    val j = join(versioned(100), Joined.left())
    try {
      assert(j.driver.outputSchema.fieldNames.toSeq === Seq("customer", "order_ts", "amount", "tier"))
    } finally j.stop()
  }

  test("the output can be watermarked again and feed a windowed aggregation in the same query") {
    val d = TestDriver(spark)
    val o = d.addInput("orders", orders, null, null)
    val t = d.addInput("tiers", tiers, null, null)
    val joined = o.transform(StreamTableJoin(
      "customer",
      "order_ts",
      ChangelogTable.versioned(t, "changed_at", ms(1000)).withTombstone("deleted"),
      Joined.left().withGracePeriod(ms(10))
    ))
    val perTier = joined.withWatermark("order_ts", "0 seconds")
      .groupBy(functions.window(col("order_ts"), "100 milliseconds"), col("tier")).agg(sum("amount").as("total"))
    d.start(perTier)
    def totals(rows: Seq[Row]) =
      rows.map(r => (r.getStruct(0).getTimestamp(0).getTime, r.getString(1), r.getLong(2))).sortBy(_._2)
    try {
      d.stepInput("tiers", Seq(tier("a", 0, "gold"), tier("b", 0, "silver")))
      d.stepInput("orders", Seq(order("a", 10, 5), order("b", 20, 7), order("a", 30, 1)))
      assert(
        d.stepInput("orders", Seq(order("a", 150, 1), order("b", 150, 1))) === Nil,
        "window [0, 100) not closed yet"
      )
      assert(totals(d.stepInput("orders", Seq(order("a", 300, 1), order("b", 300, 1)))) ===
        Seq((0L, "gold", 6L), (0L, "silver", 7L)))
    } finally d.stop()
  }

  test("every configuration error is an IllegalArgumentException when the join is built") {
    val d = TestDriver(spark)
    val o = d.addInput("orders", orders, null, null)
    val t = d.addInput("tiers", tiers, null, null)
    def error(build: => Any): String = intercept[IllegalArgumentException](build).getMessage
    def joinWith(table: ChangelogTable, joined: Joined, on: Seq[String] = Seq("customer"), ts: String = "order_ts") =
      o.transform(StreamTableJoin(on, ts, table, joined))
    val v = ChangelogTable.versioned(t, "changed_at", Duration.ofMinutes(5))

    assert(error(joinWith(v, Joined.inner().withGracePeriod(Duration.ofMinutes(6))))
      .contains("History retention must be at least grace period."))
    assert(error(joinWith(ChangelogTable.nonVersioned(t, "changed_at"), Joined.inner().withGracePeriod(ms(6))))
      .contains("KTable must be versioned to use a grace period in a stream table join."))
    assert(error(Joined.inner().withGracePeriod(ms(-1))).contains("gracePeriod must be >= 0"))
    assert(error(ChangelogTable.versioned(t, "changed_at", ms(-5))).contains("historyRetention must be >= 0"))
    assert(error(joinWith(
      v,
      Joined.inner(),
      on = Seq("user")
    )).contains("key (on, stream side) 'user' is not a column"))
    assert(error(joinWith(
      v,
      Joined.inner(),
      ts = "amount"
    )).contains("stream timestamp column 'amount' must be a timestamp"))
    assert(error(joinWith(
      ChangelogTable.versioned(t, "tier", ms(5)),
      Joined.inner()
    )).contains("table timestamp column 'tier'"))
    assert(error(joinWith(
      v.withTombstone("tier"),
      Joined.inner()
    )).contains("tombstone column 'tier' must be a boolean"))
    val ambiguous = t.select(col("*"), col("tier").as("Tier"))
    assert(error(o.transform(StreamTableJoin(
      Seq("customer"),
      "order_ts",
      ChangelogTable.versioned(ambiguous, "changed_at", ms(5)).withTombstone("TIER"),
      Joined.inner()
    )))
      .contains("tombstone 'TIER' is ambiguous"))
    val intKeys = t.withColumn("customer", col("customer").cast("int"))
    assert(error(joinWith(ChangelogTable.versioned(intKeys, "changed_at", ms(5)), Joined.inner()))
      .contains("key column 'customer' is string on the stream side but int on the table side"))
    val clash = t.withColumn("amount", col("tier"))
    assert(error(joinWith(ChangelogTable.versioned(clash, "changed_at", ms(5)), Joined.inner()))
      .contains("two columns named 'amount'"))
    assert(error(joinWith(v.withInitialVersions(spark.range(1).toDF()), Joined.inner()))
      .contains("initialVersions column 'customer' is not a column"))
    val batch = spark.createDataFrame(java.util.Arrays.asList(order("a", 1)), orders)
    assert(error(batch.transform(StreamTableJoin(
      "customer",
      "order_ts",
      v,
      Joined.inner()
    ))).contains("not a streaming DataFrame"))
    val equal = joinWith(
      ChangelogTable.versioned(t, "changed_at", Duration.ofMinutes(6)),
      Joined.inner().withGracePeriod(Duration.ofMinutes(6))
    )
    assert(
      equal.columns.toSeq === Seq("customer", "order_ts", "amount", "tier", "deleted"),
      "equal grace and retention are allowed"
    )
  }
}
