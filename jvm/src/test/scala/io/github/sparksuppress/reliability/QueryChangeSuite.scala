package io.github.sparksuppress.reliability

import java.io.File
import java.nio.charset.StandardCharsets
import java.sql.Timestamp
import java.time.Duration

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.execution.streaming.state.StateStoreAccess
import org.apache.spark.sql.functions.{col, lit}
import org.apache.spark.sql.types._

import io.github.sparksuppress.api._
import io.github.sparksuppress.api.Metrics
import io.github.sparksuppress.spark.SparkSessionSuite
import io.github.sparksuppress.testkit.SparkLine

/**
 * Restarting from a checkpoint with a changed query: what Spark and spark-suppress allow, what they refuse, and that
 * a refusal says what changed (never a deserialization stack trace). See docs/reliability.md.
 */
class QueryChangeSuite extends SparkSessionSuite {
  // Checkpoints written, stopped and read back as users' queries do (Spark's default file manager).
  override protected def quickCheckpoints: Boolean = false

  override protected def extraConf: Map[String, String] = FileSinkRun.conf

  private val T0 = OperatorsUnderTest.T0
  private def ts(ms: Long) = new Timestamp(ms)
  private def ms(n: Long) = Duration.ofMillis(n)
  private val updates = StructType(Seq(
    StructField("key", StringType),
    StructField("ts", TimestampType),
    StructField("value", LongType)
  ))
  private def feed(run: FileSinkRun, rows: Row*): Unit = run.feed(Step("updates", rows))
  private def newRun(inputs: Seq[InputSpec] = Seq(InputSpec("updates", updates, Some("ts")))): FileSinkRun =
    new FileSinkRun(spark, inputs, tempDir("rel-query-change"))

  private def suppress(name: String, limit: Long): DataFrame => DataFrame =
    _.transform(Suppress("key", "ts", Suppressed.untilTimeLimit(ms(limit), BufferConfig.unbounded()).withName(name)))

  /** The messages of an exception and its causes. */
  private def messages(e: Throwable): String =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).map(String.valueOf(_)).mkString("\n")

  private def rootCause(e: Throwable): Throwable = Iterator.iterate(e)(_.getCause).takeWhile(_ != null).toSeq.last

  /** (key, value) of every committed row, in batch order. */
  private def emitted(run: FileSinkRun): Seq[String] = run.outputByBatch().flatMap(_._2)

  test("stateless operators and added or dropped columns upstream of a named operator keep its buffered records") {
    val run = newRun()
    run.start(run.inputs("updates").transform(suppress("evolving", 1000)))
    feed(run, Row("a", ts(T0), 1L), Row("b", ts(T0 + 10), 2L))
    run.stop()
    // A filter, a new column and a dropped column before the operator: its position and state stay the same.
    val changed = run.inputs("updates").where(col("value") >= 0).withColumn("source", lit("v2")).drop("value")
      .transform(suppress("evolving", 1000))
    run.start(changed)
    feed(run, Row("c", ts(T0 + 2000), 3L))
    run.stop()
    assert(
      emitted(run).sorted === Seq("(a, 2024-01-01 00:00:00.0, null)", "(b, 2024-01-01 00:00:00.01, null)"),
      "the buffered rows come back with the new column null and without the dropped one"
    )
  }

  /** Two branches of one input: value > 0 goes through `positive`, the rest through `rest`. */
  private def branches(run: FileSinkRun, positive: DataFrame => DataFrame, rest: DataFrame => DataFrame): DataFrame = {
    val in = run.inputs("updates")
    rest(in.where(col("value") <= 0)).union(positive(in.where(col("value") > 0)))
  }

  /** Runs the branches of `before`, restarts with those of `after`; returns how the restarted query failed. */
  private def restartFails(
      before: (DataFrame => DataFrame, DataFrame => DataFrame),
      after: (DataFrame => DataFrame, DataFrame => DataFrame)
  ): Throwable = {
    val run = newRun()
    run.start(branches(run, before._1, before._2))
    feed(run, Row("a", ts(T0), 1L), Row("b", ts(T0), -1L))
    run.stop()
    run.start(branches(run, after._1, after._2))
    try intercept[Exception](feed(run, Row("a", ts(T0 + 1), 2L), Row("b", ts(T0 + 1), -2L)))
    finally run.stop()
  }

  test("a stateful operator added before a named one: Spark refuses the restart, saying the operators changed") {
    val e = restartFails((suppress("kept", 1000), identity), (suppress("kept", 1000), suppress("added", 1000)))
    val m = messages(e)
    // Spark 3.5 has no check of the operators against the state metadata: the restart fails as the operators load
    // state, the added one (first in the plan) finding kept's, kept finding none at its new position.
    if (SparkLine.is35) {
      assert(
        m.contains("belongs to the operator named 'kept'") || m.matches(
          "(?s).*state/1/\\d+/1\\.delta does not exist.*"
        ),
        m
      )
    } else assert(m.contains("STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA"), m)
  }

  test("reordered stateful operators: the state found at a named operator's position is refused as another's") {
    val e = restartFails(
      (suppress("orders", 1000), suppress("refunds", 1000)),
      (suppress("refunds", 1000), suppress("orders", 1000))
    )
    val m = messages(e)
    assert(
      m.contains("belongs to the operator named 'orders'") || m.contains("belongs to the operator named 'refunds'"),
      m
    )
    assert(m.contains("Spark locates state by operator position"), m)
    assert(rootCause(e).isInstanceOf[IllegalStateException], m)
  }

  /** Runs `before`, restarts with the time limit set to zero (Kafka's "disable instead of remove"). */
  private def disable(bound: Option[Long]): FileSinkRun = {
    def op(limit: Long): DataFrame => DataFrame = {
      val buffer =
        bound.fold[BufferConfig](BufferConfig.unbounded())(n => BufferConfig.maxRecords(n).emitEarlyWhenFull())
      _.transform(Suppress("key", "ts", Suppressed.untilTimeLimit(ms(limit), buffer).withName("disable-me")))
    }
    val run = newRun()
    run.start(run.inputs("updates").transform(op(3600 * 1000)))
    feed(run, Row("a", ts(T0), 1L), Row("b", ts(T0), 2L), Row("c", ts(T0 + 5), 3L))
    feed(run, Row("a", ts(T0 + 10), 4L))
    assert(emitted(run) === Nil)
    run.stop()
    run.start(run.inputs("updates").transform(op(0)))
    feed(run, Row("a", ts(T0 + 20), 5L))
    run
  }

  /** What was emitted, but the tick records used to move stream time. */
  private def values(run: FileSinkRun): Seq[String] =
    emitted(run).filterNot(_.startsWith("(tick")).map(_.split(", ").last)

  /** Keys (per-key layout) or shards (sharded layout) in the operator's state, from Spark's state metrics. */
  private def stateRows(run: FileSinkRun): Long = run.running.lastProgress.stateOperators.head.numRowsTotal

  test("a time limit changed to zero flushes a bounded (sharded) buffer at the shard's next record") {
    spark.conf.set("spark.sql.shuffle.partitions", "1")
    val run =
      try disable(Some(1000))
      finally spark.conf.set("spark.sql.shuffle.partitions", "2")
    try {
      // a's record touched the only shard: it replaced a's buffered update (Kafka's buffer keeps a key's latest), and
      // every entry was compared with the new limit and left.
      assert(values(run).sorted === Seq("2)", "3)", "5)"))
      assert(Metrics.forQuery(run.running)("disable-me")("suppression-buffer-count-current") === 0.0)
    } finally run.stop()
  }

  test(
    "a time limit changed to zero flushes a per-key buffer's entry when its key is next updated, others at " +
      "their old time"
  ) {
    val run = disable(None)
    try {
      assert(values(run) === Seq("5)"), "a's update replaces its buffered one (Kafka's put) and leaves at once")
      feed(run, Row("tick", ts(T0 + 1000), 6L))
      assert(values(run) === Seq("5)"), "b and c keep the timers set under the old limit: Spark cannot move them")
      assert(stateRows(run) === 2L)
      feed(run, Row("b", ts(T0 + 1001), 7L))
      assert(
        values(run).drop(1) === Seq("2)", "7)"),
        "b's entry, due under the new limit at the watermark, leaves before b's update, which passes"
      )
      feed(run, Row("tick", ts(T0 + 3600 * 1000 + 10), 8L))
      assert(values(run).drop(3) === Seq("3)"), "c leaves when its old time limit passes: nothing is lost")
      assert(stateRows(run) === 0L)
    } finally run.stop()
  }

  test("a column whose type changed since records were buffered is refused with a message naming it") {
    val run = newRun()
    run.start(run.inputs("updates").transform(suppress("typed", 1000)))
    feed(run, Row("a", ts(T0), 1L))
    run.stop()
    run.start(run.inputs("updates").withColumn("value", col("value").cast("string")).transform(suppress("typed", 1000)))
    val e = intercept[Exception](feed(run, Row("a", ts(T0 + 1), 2L)))
    run.stop()
    val m = messages(e)
    assert(m.contains("column 'value' changed type since the buffered records were stored (now string)"), m)
    assert(rootCause(e).isInstanceOf[IllegalStateException], m)
  }

  test("a chain's join: a stream column whose type changed while records wait in its grace buffer is refused") {
    val tiers = StructType(Seq(
      StructField("key", StringType),
      StructField("at", TimestampType),
      StructField("tier", StringType)
    ))
    val run = newRun(Seq(InputSpec("updates", updates, None), InputSpec("tiers", tiers, None)))
    def chain(in: Map[String, DataFrame]): DataFrame = in("updates")
      .transform(StreamTableJoin(
        "key",
        "ts",
        ChangelogTable.versioned(in("tiers"), "at", ms(60000)),
        Joined.left().withGracePeriod(ms(1000)).withName("waiting")
      ))
      .transform(suppress("after-join", 1000))
    run.start(chain(run.inputs))
    feed(run, Row("a", ts(T0), 1L))
    run.stop()
    run.start(chain(run.inputs.updated(
      "updates",
      run.inputs("updates").withColumn("value", col("value").cast("string"))
    )))
    val e = intercept[Exception](feed(run, Row("a", ts(T0 + 1), 2L)))
    run.stop()
    val m = messages(e)
    assert(m.contains("column 'value' changed type since the buffered records were stored (now string)"), m)
    assert(rootCause(e).isInstanceOf[IllegalStateException], m)
  }

  test("a join restarted without its grace period while records wait is refused; nothing is dropped silently") {
    val tiers = StructType(Seq(StructField("key", StringType), StructField("at", TimestampType)))
    val run = newRun(Seq(InputSpec("updates", updates, None), InputSpec("tiers", tiers, None)))
    def join(joined: Joined)(in: Map[String, DataFrame]): DataFrame =
      in("updates").transform(StreamTableJoin(
        "key",
        "ts",
        ChangelogTable.versioned(in("tiers"), "at", ms(60000)),
        joined
      ))
    run.start(join(Joined.left().withGracePeriod(ms(1000)).withName("graceful"))(run.inputs))
    feed(run, Row("a", ts(T0), 1L))
    run.stop()
    run.start(join(Joined.left().withName("graceful"))(run.inputs))
    val e = intercept[Exception](feed(run, Row("a", ts(T0 + 1), 2L)))
    run.stop()
    val m = messages(e)
    assert(
      m.contains("join_versioned 'graceful': the checkpoint holds 1 stream records waiting in the grace buffer, but " +
        "the join now has no grace period"),
      m
    )
  }

  for (
    (op, input, column, now) <- Seq(
      (OperatorsUnderTest.joinVersionedGrace, "tiers", "tier", "binary"),
      (OperatorsUnderTest.aggregateSessionsOnUpdate, "updates", "value", "string")
    )
  ) {
    // Refused when stored state is first read: batches of keys with no stored state may run before that.
    test(s"$op: a value column whose type changed since the state was stored is refused, naming the operator") {
      val run = new FileSinkRun(spark, op.inputs, tempDir("rel-type-change"))
      run.start(op.build(run.inputs))
      op.generate(seed = 9L, steps = 6).foreach(run.feed)
      run.stop()
      run.start(op.build(run.inputs.updated(input, run.inputs(input).withColumn(column, col(column).cast(now)))))
      val e = intercept[Exception](op.generate(seed = 10L, steps = 6).foreach(run.feed))
      run.stop()
      val m = messages(e)
      assert(
        m.contains(op.name) && (m.contains(s"column '$column' changed type") ||
          m.contains("the checkpoint's state was written for other windows, aggregations or key types")),
        m
      )
    }
  }

  for (
    op <- Seq(
      OperatorsUnderTest.suppressTimeLimit,
      OperatorsUnderTest.joinVersionedGrace,
      OperatorsUnderTest.aggregateSessionsOnUpdate,
      OperatorsUnderTest.suppressWindowClosesIdle
    )
  ) {
    test(s"$op: stored state of another format version is refused with a message saying so") {
      val run = new FileSinkRun(spark, op.inputs, tempDir("rel-format"))
      run.start(op.build(run.inputs))
      op.generate(seed = 3L, steps = 4).foreach(run.feed)
      run.stop()
      // Every stored value starts with the format byte and the operator's name (StateHeader): format 1, or 2 (an idle
      // timeout's), then the length-prefixed name. A suppress or a windowed aggregation is a chain of one: its state
      // (ChainState) starts with format 7, one node, the kind's code (suppress 0, aggregate_windowed 1) and the
      // length-prefixed name. Each is rewritten to format 99, which no version has written yet.
      val name = op.name.getBytes(StandardCharsets.UTF_8)
      val headers = Seq(1, 2).map(f => Array[Byte](f.toByte, (name.length + 1).toByte) ++ name) ++
        Seq(0, 1).map(kind => Array[Byte](7, 1, kind.toByte, (name.length + 1).toByte) ++ name)
      val deltas = FileSinkRun.files(new File(run.checkpoint, "state")).filter(_.getName.endsWith(".delta"))
      val rewritten = deltas.map(f =>
        StateStoreAccess.rewriteDeltaValues(
          f,
          spark.sparkContext.getConf,
          v => {
            // The earliest header found: format 7's kind code 1 followed by the name also reads as format 1's.
            val at = headers.map(v.indexOfSlice(_)).filter(_ >= 0).reduceOption(_ min _).getOrElse(-1)
            if (at < 0) v else v.updated(at, 99.toByte)
          }
        )
      ).sum
      assert(rewritten > 0, s"no stored value of ${op.name} found in ${deltas.mkString(", ")}")
      run.start(op.build(run.inputs))
      val e = intercept[Exception](op.generate(seed = 4L, steps = 3).foreach(run.feed))
      run.stop()
      val m = messages(e)
      assert(
        m.contains(op.name) && m.contains(": the stored") && m.contains(
          "has format 99, but this spark-suppress version reads format 1"
        ),
        m
      )
      assert(rootCause(e).isInstanceOf[IllegalStateException], m)
    }
  }
}
