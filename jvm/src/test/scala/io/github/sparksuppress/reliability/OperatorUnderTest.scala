package io.github.sparksuppress.reliability

import java.sql.Timestamp
import java.time.Duration

import scala.util.Random

import org.apache.spark.sql.{Column, DataFrame, Row}
import org.apache.spark.sql.functions.{col, count, last, max, sum}
import org.apache.spark.sql.streaming.StreamingQuery
import org.apache.spark.sql.types._

import io.github.sparksuppress.api._
import io.github.sparksuppress.api.Metrics

/** One input stream of an operator under test: its schema and the column its watermark is on (None: no watermark). */
final case class InputSpec(name: String, schema: StructType, watermarkOn: Option[String])

/** One micro-batch of a generated stream: rows for one input. */
final case class Step(input: String, rows: Seq[Row])

/**
 * An operator as the reliability checks see it: its inputs, how to build it on them, a generated stream that
 * exercises it (late and out-of-order records included), and how much it holds buffered in a running query. Adding an
 * operator to every check is one more entry in [[OperatorsUnderTest.all]].
 */
trait OperatorUnderTest {

  /** Also the operator's name (`withName`): metrics and state are found under it. */
  def name: String
  def inputs: Seq[InputSpec]
  def build(inputs: Map[String, DataFrame]): DataFrame

  /** A deterministic stream of `steps` micro-batches. */
  def generate(seed: Long, steps: Int): Seq[Step]

  /** Records held in the operator's buffer now (from its metrics); > 0 means a stop here loses them if unsafe. */
  def buffered(query: StreamingQuery): Long

  /**
   * Whether a restarted query emits each row in the same micro-batch as an uninterrupted one. Not so for what moves
   * with the watermark alone, without a timer: Spark restarts with the watermark of the last micro-batch before the
   * stop, not the one that batch's records would have moved it to (timers make Spark persist the moved watermark in a
   * no-data micro-batch), so such a row can come one micro-batch later. It is still emitted exactly once.
   */
  def sameBatchesAfterRestart: Boolean = true

  override def toString: String = name
}

object OperatorsUnderTest {
  private def ts(ms: Long) = new Timestamp(ms)
  private def ms(n: Long) = Duration.ofMillis(n)
  private val IdleForever = Duration.ofHours(1)

  /** Base time of generated streams: 2024-01-01T00:00:00Z (Spark refuses event-time timers at or below 0). */
  val T0: Long = 1704067200000L

  private def metric(query: StreamingQuery, operator: String, metric: String): Long =
    Metrics.forQuery(query).get(operator).flatMap(_.get(metric)).map(_.toLong).getOrElse(0L)

  /**
   * Event times that mostly advance, with records out of order within `jitterMs` and, every few steps, a record far
   * behind (late: below the watermark).
   */
  private final class Clock(seed: Long) {
    val random = new Random(seed)
    private var base = T0
    def next(jitterMs: Int): Long = {
      base += random.nextInt(1500)
      if (random.nextInt(7) == 0) base - 8000 - random.nextInt(4000) // late
      else base - random.nextInt(jitterMs + 1)
    }
  }

  private val updates = StructType(Seq(
    StructField("key", StringType),
    StructField("ts", TimestampType),
    StructField("value", LongType)
  ))

  /** Rate limiting, one entry per key (the per-key state layout). */
  val suppressTimeLimit: OperatorUnderTest = new SuppressUnderTest(
    "rel-suppress-time-limit",
    Suppressed.untilTimeLimit(ms(3000), BufferConfig.unbounded())
  )

  /** Rate limiting with a small bound that emits early (the sharded state layout). */
  val suppressBoundedEmitEarly: OperatorUnderTest = new SuppressUnderTest(
    "rel-suppress-bounded",
    Suppressed.untilTimeLimit(ms(4000), BufferConfig.maxRecords(3).emitEarlyWhenFull())
  )

  private class SuppressUnderTest(val name: String, suppressed: Suppressed) extends OperatorUnderTest {
    val inputs: Seq[InputSpec] = Seq(InputSpec("updates", updates, Some("ts")))
    def build(in: Map[String, DataFrame]): DataFrame =
      in("updates").transform(Suppress("key", "ts", suppressed.withName(name)))
    def generate(seed: Long, steps: Int): Seq[Step] = {
      val clock = new Clock(seed)
      (0 until steps).map { i =>
        Step(
          "updates",
          Seq.fill(1 + clock.random.nextInt(3)) {
            Row(s"k${clock.random.nextInt(6)}", ts(clock.next(2000)), i.toLong)
          }
        )
      }
    }
    def buffered(query: StreamingQuery): Long = metric(query, name, "suppression-buffer-count-current")
  }

  private val windowedUpdates = StructType(updates.fields :+ StructField(
    "window",
    StructType(Seq(
      StructField("start", TimestampType),
      StructField("end", TimestampType)
    ))
  ))

  /** Final results of 2-second windows with 1 second of grace. */
  val suppressWindowCloses: OperatorUnderTest =
    new SuppressWindowClosesUnderTest("rel-suppress-window-closes", LateRecords.Drop)

  /** The same with late updates (the generator's 2.5 s jitter exceeds the 1 s grace) emitted flagged. */
  val suppressWindowClosesLateEmit: OperatorUnderTest =
    new SuppressWindowClosesUnderTest("rel-suppress-window-closes-late", LateRecords.Emit)

  /**
   * The same with an idle timeout, too long to fire during a run (its timing would depend on the wall clock): the
   * operator on processing-time timeouts, called every batch, with its clock in the state.
   */
  val suppressWindowClosesIdle: OperatorUnderTest =
    new SuppressWindowClosesUnderTest("rel-suppress-window-closes-idle", LateRecords.Drop, Some(IdleForever))

  private class SuppressWindowClosesUnderTest(val name: String, late: LateRecords, idle: Option[Duration] = None)
      extends OperatorUnderTest {
    val inputs: Seq[InputSpec] = Seq(InputSpec("updates", windowedUpdates, Some("ts")))
    def build(in: Map[String, DataFrame]): DataFrame = {
      val s = Suppress(Seq("key"), "ts", Suppressed.untilWindowCloses(BufferConfig.unbounded()).withName(name))
        .withWindow(WindowColumns.struct("window")).withGrace(ms(1000)).withLateRecords(late)
      in("updates").transform(idle.map(s.withIdleTimeout).getOrElse(s))
    }
    def generate(seed: Long, steps: Int): Seq[Step] = {
      val clock = new Clock(seed)
      (0 until steps).map { i =>
        Step(
          "updates",
          Seq.fill(1 + clock.random.nextInt(3)) {
            val t = clock.next(2500)
            val start = t - Math.floorMod(t, 2000L)
            Row(s"k${clock.random.nextInt(4)}", ts(t), i.toLong, Row(ts(start), ts(start + 2000)))
          }
        )
      }
    }
    def buffered(query: StreamingQuery): Long = metric(query, name, "suppression-buffer-count-current")
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

  /** A left join against a versioned table with a grace period; table updates arrive out of order too. */
  val joinVersionedGrace: OperatorUnderTest = new OperatorUnderTest {
    val name = "rel-join-versioned-grace"
    val inputs: Seq[InputSpec] = Seq(InputSpec("orders", orders, None), InputSpec("tiers", tiers, None))
    def build(in: Map[String, DataFrame]): DataFrame = {
      val table = ChangelogTable.versioned(in("tiers"), "changed_at", ms(20000))
      in("orders").transform(StreamTableJoin(
        "customer",
        "order_ts",
        table,
        Joined.left().withGracePeriod(ms(2500)).withName(name)
      ))
    }
    def generate(seed: Long, steps: Int): Seq[Step] = {
      val clock = new Clock(seed)
      (0 until steps).map { i =>
        if (clock.random.nextInt(3) == 0) {
          Step(
            "tiers",
            Seq.fill(1 + clock.random.nextInt(2)) {
              Row(s"c${clock.random.nextInt(4)}", ts(clock.next(3000)), s"tier$i")
            }
          )
        } else {
          Step(
            "orders",
            Seq.fill(1 + clock.random.nextInt(3)) {
              Row(s"c${clock.random.nextInt(4)}", ts(clock.next(2000)), i.toLong)
            }
          )
        }
      }
    }
    def buffered(query: StreamingQuery): Long = metric(query, name, "grace-buffer-count-current")
  }

  /**
   * The same join with a watermark on the orders: waiting records also leave on the watermark (the default), so
   * shards that get no orders for a while are called through heartbeats and release on the watermark.
   */
  val joinWatermarkRelease: OperatorUnderTest = new OperatorUnderTest {
    val name = "rel-join-watermark-release"
    val inputs: Seq[InputSpec] = Seq(InputSpec("orders", orders, Some("order_ts")), InputSpec("tiers", tiers, None))
    def build(in: Map[String, DataFrame]): DataFrame = {
      val table = ChangelogTable.versioned(in("tiers"), "changed_at", ms(20000))
      in("orders").transform(StreamTableJoin(
        "customer",
        "order_ts",
        table,
        Joined.left().withGracePeriod(ms(2500)).withName(name)
      ))
    }
    def generate(seed: Long, steps: Int): Seq[Step] = joinVersionedGrace.generate(seed, steps)
    def buffered(query: StreamingQuery): Long = metric(query, name, "grace-buffer-count-current")
    override def sameBatchesAfterRestart: Boolean = false
  }

  /** State rows Spark counts for the query's stateful operators: one per key with open windows. */
  private def stateRows(query: StreamingQuery): Long =
    Option(query.lastProgress).map(_.stateOperators.map(_.numRowsTotal).sum).getOrElse(0L)

  private class AggregateUnderTest(
      val name: String,
      windows: Windows,
      emit: EmitStrategy,
      late: LateRecords = LateRecords.Drop,
      idle: Option[Duration] = None
  ) extends OperatorUnderTest {
    val inputs: Seq[InputSpec] = Seq(InputSpec("updates", updates, Some("ts")))
    def build(in: Map[String, DataFrame]): DataFrame = {
      val a = AggregateWindowed(
        Seq("key"),
        "ts",
        windows,
        Seq(count("*").as("n"), sum("value").as("total"), max("value").as("last_step")),
        emit
      ).withName(name)
        .withLateRecords(late)
      in("updates").transform(idle.map(a.withIdleTimeout).getOrElse(a))
    }
    def generate(seed: Long, steps: Int): Seq[Step] = {
      val clock = new Clock(seed)
      (0 until steps).map { i =>
        Step(
          "updates",
          Seq.fill(1 + clock.random.nextInt(3)) {
            Row(s"k${clock.random.nextInt(4)}", ts(clock.next(2500)), i.toLong)
          }
        )
      }
    }
    def buffered(query: StreamingQuery): Long = stateRows(query)
  }

  /** Final results of hopping windows (3 s, advancing by 1 s, 1 s of grace): open windows wait in state. */
  val aggregateHoppingOnClose: OperatorUnderTest = new AggregateUnderTest(
    "rel-aggregate-hopping-close",
    TimeWindows.ofSizeAndGrace(ms(3000), ms(1000)).advanceBy(ms(1000)),
    EmitStrategy.onWindowClose()
  )

  /** Session windows emitting every update, merges retracting the sessions they replace. */
  val aggregateSessionsOnUpdate: OperatorUnderTest = new AggregateUnderTest(
    "rel-aggregate-sessions-update",
    SessionWindows.ofInactivityGapAndGrace(ms(2000), ms(1500)),
    EmitStrategy.onWindowUpdate()
  )

  /**
   * Orders left-joined (grace 2.5 s) with the customers' tiers, `between` applied to the joined stream, revenue per
   * customer and 3-second window, `beforeSuppress` applied to the windowed updates, final results only, in one query.
   * Its state is one entry per shard holding all the nodes.
   */
  private final class JoinAggregateSuppressChain(
      val name: String,
      aggregations: Seq[Column],
      between: DataFrame => DataFrame,
      beforeSuppress: DataFrame => DataFrame,
      late: LateRecords = LateRecords.Drop,
      idle: Option[Duration] = None
  ) extends OperatorUnderTest {
    val inputs: Seq[InputSpec] = Seq(InputSpec("orders", orders, None), InputSpec("tiers", tiers, None))
    def build(in: Map[String, DataFrame]): DataFrame = {
      val table = ChangelogTable.versioned(in("tiers"), "changed_at", ms(20000))
      in("orders")
        .transform(StreamTableJoin(
          "customer",
          "order_ts",
          table,
          Joined.left().withGracePeriod(ms(2500)).withName(s"$name-join")
        ))
        .transform(between)
        .transform(AggregateWindowed(
          Seq("customer"),
          "order_ts",
          TimeWindows.ofSizeAndGrace(ms(3000), ms(1000)),
          aggregations,
          EmitStrategy.onWindowUpdate()
        ).withName(s"$name-revenue").withLateRecords(late))
        .transform(beforeSuppress)
        .transform {
          val s = Suppress(
            Seq("customer"),
            "order_ts",
            Suppressed.untilWindowCloses(BufferConfig.unbounded()).withName(name)
          )
          idle.map(s.withIdleTimeout).getOrElse(s)
        }
    }
    def generate(seed: Long, steps: Int): Seq[Step] = joinVersionedGrace.generate(seed, steps)
    // One state entry per shard that has seen records: each holds the nodes' buffers and clocks.
    def buffered(query: StreamingQuery): Long = stateRows(query)
  }

  /** The three-operator chain: the revenue carries the tier of the latest order. */
  val chainJoinAggregateSuppress: OperatorUnderTest = new JoinAggregateSuppressChain(
    "rel-chain-join-aggregate-suppress",
    Seq(sum("amount").as("revenue"), last("tier").as("tier")),
    identity,
    identity
  )

  /**
   * The chain with stateless steps inside it: a `where` on the join's output (KStream.filter: orders without a tier
   * are dropped), a `withColumn` (mapValues) and a `where` on the windowed revenue before the suppress (KTable.filter
   * with old values, its per-window memory in the shard's state).
   */
  val chainWithFilters: OperatorUnderTest = new JoinAggregateSuppressChain(
    "rel-chain-join-filter-aggregate-filter-suppress",
    Seq(sum("double_amount").as("revenue")),
    _.where(col("tier").isNotNull).withColumn("double_amount", col("amount") * 2),
    _.where(col("revenue") >= 20)
  )

  /**
   * The three-operator chain with options beyond Kafka inside it: the aggregation's late records emitted (they pass
   * the suppress by, flagged), and an idle timeout on the suppress too long to fire during a run (the chain on
   * processing-time timeouts, called every batch, with the suppress's idle clock in the shard's state).
   */
  val chainLateAndIdle: OperatorUnderTest = new JoinAggregateSuppressChain(
    "rel-chain-join-aggregate-late-suppress-idle",
    Seq(sum("amount").as("revenue")),
    identity,
    identity,
    LateRecords.Emit,
    Some(IdleForever)
  )

  /** Final results of hopping windows with the records dropped for closed windows emitted, flagged late. */
  val aggregateHoppingLateEmit: OperatorUnderTest = new AggregateUnderTest(
    "rel-aggregate-hopping-late",
    TimeWindows.ofSizeAndGrace(ms(3000), ms(1000)).advanceBy(ms(1000)),
    EmitStrategy.onWindowClose(),
    LateRecords.Emit
  )

  /** Final results of hopping windows with an idle timeout that never fires during a run (as suppress's above). */
  val aggregateHoppingIdle: OperatorUnderTest = new AggregateUnderTest(
    "rel-aggregate-hopping-idle",
    TimeWindows.ofSizeAndGrace(ms(3000), ms(1000)).advanceBy(ms(1000)),
    EmitStrategy.onWindowClose(),
    idle = Some(IdleForever)
  )

  /** Every operator the reliability checks cover. */
  val all: Seq[OperatorUnderTest] = Seq(
    suppressTimeLimit,
    suppressBoundedEmitEarly,
    suppressWindowCloses,
    suppressWindowClosesLateEmit,
    suppressWindowClosesIdle,
    joinVersionedGrace,
    joinWatermarkRelease,
    aggregateHoppingOnClose,
    aggregateSessionsOnUpdate,
    aggregateHoppingLateEmit,
    aggregateHoppingIdle,
    chainJoinAggregateSuppress,
    chainWithFilters,
    chainLateAndIdle
  )
}
