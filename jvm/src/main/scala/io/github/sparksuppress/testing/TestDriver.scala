package io.github.sparksuppress.testing

import java.nio.file.Files
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, Encoders, Row, SparkSession}
import io.github.sparksuppress.shims.StreamingRuntime.MemoryStream
import org.apache.spark.sql.catalyst.plans.logical.FlatMapGroupsWithState
import org.apache.spark.sql.streaming.{GroupStateTimeout, StreamingQuery, StreamingQueryListener, Trigger}
import org.apache.spark.sql.types.StructType

/**
 * Tests a streaming pipeline one micro-batch at a time, as Kafka users test topologies with `TopologyTestDriver`:
 * each [[step]] feeds rows as one micro-batch, runs it to completion (including the no-data batch a moved watermark
 * triggers, so timers that became due fire within the step) and returns what the pipeline emitted during the step. No
 * wall-clock waiting is involved.
 *
 * {{{
 *   val driver = TestDriver(spark, schema, timestamp = "ts")
 *   driver.start(driver.input.transform(Suppress("user", "ts", suppressed)))
 *   driver.step(Row("a", ts(0), 1L))   // rows emitted while processing this batch
 *   driver.stop()
 * }}}
 *
 * The input carries a watermark on `timestamp` with the given delay ("0 seconds": Kafka's exact timing). [[restart]]
 * stops the query and starts it again from the same checkpoint, to test recovery.
 *
 * A pipeline with processing-time timers (e.g. a wall-clock time limit, or an idle timeout) never runs out of
 * batches, since Spark runs one per trigger (every 20 ms here) to check those timers; for it a step waits until the
 * batch holding its rows has completed, and [[idle]] lets wall-clock time pass without input.
 */
final class TestDriver private (val spark: SparkSession) {

  private val streams = scala.collection.mutable.LinkedHashMap.empty[String, (MemoryStream[Row], DataFrame)]
  private val emitted = new ConcurrentLinkedQueue[Row]()
  private val progress = new TestDriver.ProgressCounter
  private var rowsAdded = 0L
  private var processingTimeTimers = false
  private var restartedWithoutInput = false
  private var output: DataFrame = _
  private var query: StreamingQuery = _
  private var checkpoint: String = _

  /**
   * Adds an input stream named `name` and returns it: the schema's columns, with a watermark on `timestamp` (none
   * when `timestamp` is null). Inputs are added before [[start]].
   */
  def addInput(name: String, schema: StructType, timestamp: String, watermarkDelay: String): DataFrame = {
    require(query == null, "add inputs before start()")
    require(!streams.contains(name), s"input '$name' exists already")
    val stream = MemoryStream[Row](Encoders.row(schema), spark.sqlContext)
    val df = if (timestamp == null) stream.toDF() else stream.toDF().withWatermark(timestamp, watermarkDelay)
    streams(name) = (stream, df)
    df
  }

  /** The input stream named `name`. */
  def input(name: String): DataFrame = named(name)._2

  /** The schema of the input named `name` (rows fed to it have this layout). */
  def inputSchema(name: String): StructType = named(name)._2.schema

  private def named(name: String): (MemoryStream[Row], DataFrame) =
    streams.getOrElse(
      name,
      throw new IllegalArgumentException(s"no input named '$name'; inputs: ${streams.keys.mkString(", ")}")
    )

  /** The only input stream (for drivers with a single input). */
  def input: DataFrame = single._2

  private def single: (MemoryStream[Row], DataFrame) = {
    require(streams.size == 1, s"this driver has ${streams.size} inputs; name the one to use")
    streams.head._2
  }

  /** Starts running `pipeline` (a DataFrame computed from [[input]]), with a fresh checkpoint. */
  def start(pipeline: DataFrame): this.type = {
    require(query == null, "the driver is already started; stop() it first")
    output = pipeline
    processingTimeTimers = pipeline.queryExecution.analyzed.exists {
      case f: FlatMapGroupsWithState => f.timeout == GroupStateTimeout.ProcessingTimeTimeout()
      case _ => false
    }
    checkpoint = Files.createTempDirectory("spark-suppress-test-driver").toString
    run()
    this
  }

  private def run(): Unit = {
    val sink = emitted
    spark.streams.addListener(progress)
    query = output.writeStream
      .option("checkpointLocation", checkpoint)
      .trigger(Trigger.ProcessingTime(if (processingTimeTimers) 20L else 0L))
      .foreachBatch { (batch: DataFrame, _: Long) => batch.collect().foreach(sink.add); () }
      .start()
  }

  /** Feeds `rows` to the only input as one micro-batch and returns the rows emitted while processing it. */
  def step(rows: Row*): Seq[Row] = {
    require(query != null, "start(pipeline) the driver before feeding it")
    if (rows.nonEmpty) { single._1.addData(rows); rowsAdded += rows.size; restartedWithoutInput = false }
    advance()
  }

  /** Feeds `rows` to the input named `name` as one micro-batch; returns the rows emitted while processing it. */
  def stepInput(name: String, rows: Seq[Row]): Seq[Row] = {
    require(query != null, "start(pipeline) the driver before feeding it")
    val (stream, _) = named(name)
    if (rows.nonEmpty) { stream.addData(rows); rowsAdded += rows.size; restartedWithoutInput = false }
    advance()
  }

  /** Runs whatever is pending (e.g. after a restart) and returns what was emitted. */
  def advance(): Seq[Row] = {
    if (processingTimeTimers) progress.awaitInputRows(query, rowsAdded)
    else query.processAllAvailable()
    drain()
  }

  /**
   * Lets wall-clock time pass without input: waits until a micro-batch that started at least `duration` after the
   * last one that moved the query's time (had input rows, or a new watermark) has completed, and returns what was
   * emitted meanwhile (e.g. what an idle timeout released). It waits on the real clock, `duration` and a trigger or
   * two, so keep durations small. Without processing-time timers Spark runs no micro-batch without input, so nothing
   * can happen: the time passes and nothing is run. Nor does Spark run one after [[restart]] until input arrives (it
   * decides on batches without input from the last batch the running query executed), so idling right after a restart
   * is refused: [[step]] first.
   */
  def idle(duration: java.time.Duration): Seq[Row] = {
    require(query != null, "start(pipeline) the driver before letting it idle")
    if (processingTimeTimers && restartedWithoutInput) {
      throw new IllegalStateException(
        "idle() right after restart(): Spark runs no micro-batch after a restart until input arrives, so no time " +
          "would pass for the pipeline. Feed a step first."
      )
    }
    if (processingTimeTimers) {
      progress.awaitInputRows(query, rowsAdded)
      progress.awaitQuiet(query, duration.toMillis)
    } else {
      Thread.sleep(duration.toMillis)
      query.processAllAvailable()
    }
    drain()
  }

  /** Stops and restarts the query from its checkpoint; state and pending input survive. */
  def restart(): this.type = {
    require(checkpoint != null, "the driver is stopped and its checkpoint deleted; start(pipeline) it again")
    halt()
    run()
    restartedWithoutInput = true
    this
  }

  /** Stops the query and deletes its checkpoint (a test makes one per driver: they would pile up in the temp dir). */
  def stop(): Unit = {
    halt()
    if (checkpoint != null) {
      val root = java.nio.file.Paths.get(checkpoint)
      checkpoint = null
      CheckpointFiles.delete(root)
    }
  }

  private def halt(): Unit = if (query != null) {
    try query.stop()
    finally {
      query = null
      spark.streams.removeListener(progress)
    }
  }

  /** The schema of what the pipeline emits. */
  def outputSchema: StructType = {
    require(output != null, "start(pipeline) the driver first")
    output.schema
  }

  /** The running query, e.g. for `spark_suppress.metrics(query)`. */
  def streamingQuery: StreamingQuery = query

  private def drain(): Seq[Row] = {
    val out = Seq.newBuilder[Row]
    var r = emitted.poll()
    while (r != null) { out += r; r = emitted.poll() }
    out.result()
  }
}

object TestDriver {

  /**
   * Per query (its id survives restarts): the input rows of completed batches, so that a step can wait for its batch
   * to finish; and when the query's time last moved and the latest executed batch started, so that [[idle]] can wait.
   */
  private final class ProgressCounter extends StreamingQueryListener {
    private val rows = new java.util.concurrent.ConcurrentHashMap[java.util.UUID, java.lang.Long]()
    private val watermarks = scala.collection.mutable.Map.empty[java.util.UUID, String]
    private val movedAt = scala.collection.mutable.Map.empty[java.util.UUID, Long]
    private val latestStart = scala.collection.mutable.Map.empty[java.util.UUID, Long]

    override def onQueryStarted(event: StreamingQueryListener.QueryStartedEvent): Unit = ()
    override def onQueryTerminated(event: StreamingQueryListener.QueryTerminatedEvent): Unit = synchronized(notifyAll())
    override def onQueryProgress(event: StreamingQueryListener.QueryProgressEvent): Unit = synchronized {
      val p = event.progress
      rows.merge(p.id, p.numInputRows, (a, b) => a + b)
      // Spark also reports triggers that ran no batch; only executed batches (they add one) count.
      if (p.durationMs.containsKey("addBatch")) {
        val started = java.time.Instant.parse(p.timestamp).toEpochMilli
        val watermark = Option(p.eventTime.get("watermark")).getOrElse("")
        if (p.numInputRows > 0 || !watermarks.get(p.id).contains(watermark) || !movedAt.contains(p.id)) {
          // Its end, not its start: the batch's own timestamp (what operators see) is taken after the trigger started.
          movedAt(p.id) = started + p.durationMs.getOrDefault("triggerExecution", 0L)
        }
        watermarks(p.id) = watermark
        latestStart(p.id) = math.max(latestStart.getOrElse(p.id, Long.MinValue), started)
      }
      notifyAll()
    }

    /** Waits until the query's batches have consumed `target` input rows in total (or the query failed). */
    def awaitInputRows(query: StreamingQuery, target: Long): Unit =
      await(query, "the step's rows were not processed")(rows.getOrDefault(query.id, 0L) >= target)

    /** Waits until a batch that started `ms` after the query's time last moved has completed. */
    def awaitQuiet(query: StreamingQuery, ms: Long): Unit =
      await(query, s"no micro-batch ran $ms ms after the last input") {
        movedAt.get(query.id).exists(moved => latestStart.get(query.id).exists(_ >= moved + ms))
      }

    private def await(query: StreamingQuery, failure: String)(done: => Boolean): Unit = synchronized {
      val deadline = System.nanoTime() + 120L * 1000 * 1000 * 1000
      while (!done) {
        query.exception.foreach(e => throw e)
        if (!query.isActive) throw new IllegalStateException(s"the query stopped: $failure")
        val left = (deadline - System.nanoTime()) / 1000000
        if (left <= 0) throw new IllegalStateException(s"$failure within 120 s")
        wait(math.min(left, 1000L))
      }
    }
  }

  /** A driver with one input, named "input", watermarked on `timestamp`. */
  def apply(
      spark: SparkSession,
      schema: StructType,
      timestamp: String,
      watermarkDelay: String = "0 seconds"
  ): TestDriver = {
    val d = new TestDriver(spark)
    d.addInput("input", schema, timestamp, watermarkDelay)
    d
  }

  /** A driver without inputs yet: add them with [[TestDriver.addInput]]. */
  def apply(spark: SparkSession): TestDriver = new TestDriver(spark)

  /** Rows of the emitted output, as a Java list (for py4j). */
  private[sparksuppress] def asJava(rows: Seq[Row]): java.util.List[Row] = rows.asJava
}
