package io.github.sparksuppress.testing

import java.nio.file.Files
import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, Encoders, Row, SparkSession}
import org.apache.spark.sql.execution.streaming.runtime.MemoryStream
import org.apache.spark.sql.streaming.{StreamingQuery, Trigger}
import org.apache.spark.sql.types.StructType

/**
 * Tests a streaming pipeline one micro-batch at a time, as Kafka users test topologies with
 * `TopologyTestDriver`: each [[step]] feeds rows as one micro-batch, runs it to completion (including the
 * no-data batch a moved watermark triggers, so timers that became due fire within the step) and returns what
 * the pipeline emitted during the step. No wall-clock waiting is involved.
 *
 * {{{
 *   val driver = TestDriver(spark, schema, timestamp = "ts")
 *   driver.start(driver.input.transform(Suppress("user", "ts", suppressed)))
 *   driver.step(Row("a", ts(0), 1L))   // rows emitted while processing this batch
 *   driver.stop()
 * }}}
 *
 * The input carries a watermark on `timestamp` with the given delay ("0 seconds": Kafka's exact timing).
 * [[restart]] stops the query and starts it again from the same checkpoint, to test recovery.
 */
final class TestDriver private (
    val spark: SparkSession,
    val schema: StructType,
    val timestamp: String,
    watermarkDelay: String) {

  private val stream = MemoryStream[Row](Encoders.row(schema), spark)
  private val emitted = new ConcurrentLinkedQueue[Row]()
  private var output: DataFrame = _
  private var query: StreamingQuery = _
  private var checkpoint: String = _
  @volatile private var lastFailure: Throwable = _

  /** The input stream: the schema's columns with a watermark on `timestamp`. */
  val input: DataFrame = stream.toDF().withWatermark(timestamp, watermarkDelay)

  /** Starts running `pipeline` (a DataFrame computed from [[input]]), with a fresh checkpoint. */
  def start(pipeline: DataFrame): this.type = {
    require(query == null, "the driver is already started; stop() it first")
    output = pipeline
    checkpoint = Files.createTempDirectory("spark-suppress-test-driver").toString
    run()
    this
  }

  private def run(): Unit = {
    lastFailure = null
    val sink = emitted
    query = output.writeStream
      .option("checkpointLocation", checkpoint)
      .trigger(Trigger.ProcessingTime(0L))
      .foreachBatch { (batch: DataFrame, _: Long) => batch.collect().foreach(sink.add); () }
      .start()
  }

  /** Feeds `rows` as one micro-batch and returns the rows the pipeline emitted while processing it. */
  def step(rows: Row*): Seq[Row] = {
    require(query != null, "start(pipeline) the driver before feeding it")
    if (rows.nonEmpty) stream.addData(rows)
    advance()
  }

  /** Runs whatever is pending (e.g. after a restart) and returns what was emitted. */
  def advance(): Seq[Row] = {
    try query.processAllAvailable()
    catch { case e: Throwable => lastFailure = e; throw e }
    drain()
  }

  /** Stops and restarts the query from its checkpoint; state and pending input survive. */
  def restart(): this.type = {
    stop()
    run()
    this
  }

  def stop(): Unit = if (query != null) {
    try query.stop() finally query = null
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
  def apply(spark: SparkSession, schema: StructType, timestamp: String, watermarkDelay: String = "0 seconds"): TestDriver =
    new TestDriver(spark, schema, timestamp, watermarkDelay)

  /** Rows of the emitted output, as a Java list (for py4j). */
  private[sparksuppress] def asJava(rows: Seq[Row]): java.util.List[Row] = rows.asJava
}
