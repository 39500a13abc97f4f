package io.github.sparksuppress.reliability

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths}

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, Encoders, Row, SparkSession}
import io.github.sparksuppress.shims.StreamingRuntime.MemoryStream
import org.apache.spark.sql.execution.streaming.state.StateStoreAccess
import org.apache.spark.sql.functions.input_file_name
import org.apache.spark.sql.catalyst.plans.logical.FlatMapGroupsWithState
import org.apache.spark.sql.streaming.{GroupStateTimeout, StreamingQuery, StreamingQueryListener, Trigger}
import org.apache.spark.sql.types.StructType

/**
 * Runs an operator under test as a real streaming query: in-memory inputs, a checkpoint, and Spark's file sink
 * (Parquet), which is exactly-once: a batch that is run again after a restart is not written twice.
 *
 * Each [[feed]] adds one micro-batch and runs it to completion (including the no-data batch a moved watermark
 * triggers). [[stop]] and [[start]] restart from the same checkpoint with any pipeline built on [[inputs]], so the
 * query may change between runs. [[outputByBatch]] reads back what the sink committed, per batch.
 *
 * A pipeline with processing-time timeouts (an idle timeout) runs a batch at every trigger, so Spark never reports it
 * idle: it gets a 20 ms trigger, and a feed waits for the batch that read its rows and the one after it (which runs
 * with the watermark those rows moved), counted by a listener.
 */
final class FileSinkRun(spark: SparkSession, specs: Seq[InputSpec], dir: String) {
  private val streams: Map[String, MemoryStream[Row]] =
    specs.map(s => s.name -> MemoryStream[Row](Encoders.row(s.schema), spark.sqlContext)).toMap

  /** The input DataFrames, watermarked as their specs say. */
  val inputs: Map[String, DataFrame] = specs.map { s =>
    val df = streams(s.name).toDF()
    s.name -> s.watermarkOn.fold(df)(c => df.withWatermark(c, "0 seconds"))
  }.toMap

  val checkpoint: String = new File(dir, "checkpoint").getPath
  val sinkPath: String = new File(dir, "sink").getPath
  private var query: StreamingQuery = _
  private var schema: StructType = _
  private var timers = false
  private var added = 0L
  private val batches = new FileSinkRun.BatchCounter

  def start(pipeline: DataFrame): this.type = {
    require(query == null, "stop() the running query first")
    schema = pipeline.schema
    timers = pipeline.queryExecution.analyzed.exists {
      case f: FlatMapGroupsWithState => f.timeout == GroupStateTimeout.ProcessingTimeTimeout()
      case _ => false
    }
    if (timers) spark.streams.addListener(batches)
    query = pipeline.writeStream
      .format("parquet")
      .option("path", sinkPath)
      .option("checkpointLocation", checkpoint)
      .trigger(Trigger.ProcessingTime(if (timers) 20L else 0L))
      .start()
    batches.queryId = query.id
    this
  }

  def running: StreamingQuery = query

  def feed(step: Step): Unit = {
    add(step)
    if (timers) batches.awaitRowsAndOneMore(query, added) else query.processAllAvailable()
  }

  /** Adds a step without waiting for it (a stop may then interrupt its batch anywhere). */
  def add(step: Step): Unit = { streams(step.input).addData(step.rows); added += step.rows.size }

  /**
   * Processes whatever is pending, e.g. after a restart (which runs no batch without input when there are timers).
   */
  def drain(): Unit =
    if (!timers) query.processAllAvailable() else if (batches.rows < added) batches.awaitRowsAndOneMore(query, added)

  /**
   * Stops the query and drops the state stores this JVM holds, so that the next run reads its state back from the
   * checkpoint files, as a new process would.
   */
  def stop(): Unit = if (query != null) {
    try query.stop()
    finally {
      if (timers) spark.streams.removeListener(batches)
      query = null
      StateStoreAccess.unloadAll()
    }
  }

  /**
   * Makes the last batch look unfinished: its commit record is deleted, as if the process died after the sink had
   * written the batch but before the checkpoint recorded it. A restart runs that batch again.
   */
  def forgetLastCommit(): Long = {
    val commits = new File(checkpoint, "commits")
    val last = commits.listFiles().map(_.getName).filter(_.forall(_.isDigit)).map(_.toLong).max
    Files.delete(new File(commits, last.toString).toPath)
    new File(commits, s".$last.crc").delete()
    last
  }

  /** The rows the sink committed, per batch id, in batch order (batches that wrote nothing are left out). */
  def outputByBatch(): Seq[(Long, Seq[String])] = {
    val fileToBatch = sinkLog().toMap
    if (fileToBatch.isEmpty) return Nil
    val rows = spark.read.schema(schema).parquet(fileToBatch.keys.toSeq: _*)
      .withColumn("__file", input_file_name()).collect()
    rows.groupBy(r => fileToBatch(normalise(r.getAs[String]("__file"))))
      .map { case (batch, rs) =>
        batch -> rs.map(r => FileSinkRun.canonical(Row.fromSeq(r.toSeq.dropRight(1)))).toSeq.sorted
      }
      .toSeq.sortBy(_._1)
  }

  /** (file, batch id) for every data file the file sink's log committed. */
  private def sinkLog(): Seq[(String, Long)] = {
    val log = new File(sinkPath, "_spark_metadata")
    if (!log.isDirectory) return Nil
    log.listFiles().toSeq.filter(f => f.getName.forall(_.isDigit)).flatMap { f =>
      val text = new String(Files.readAllBytes(f.toPath), StandardCharsets.UTF_8)
      FileSinkRun.PathField.findAllMatchIn(text).map(m => normalise(m.group(1)) -> f.getName.toLong).toSeq
    }
  }

  private def normalise(path: String): String = Paths.get(new java.net.URI(path).getPath).toString
}

object FileSinkRun {
  private val PathField = "\"path\":\"([^\"]+)\"".r

  /** A row as a string that compares equal exactly when the rows are equal (nested values included). */
  def canonical(r: Row): String = text(r)

  private def text(v: Any): String = v match {
    case r: Row => r.toSeq.map(text).mkString("(", ", ", ")")
    case b: Array[Byte] => b.mkString("bytes[", ",", "]")
    case m: scala.collection.Map[_, _] =>
      m.toSeq.map { case (k, x) => s"${text(k)}->${text(x)}" }.sorted.mkString("map{", ", ", "}")
    case s: scala.collection.Seq[_] => s.map(text).mkString("[", ", ", "]")
    case x => String.valueOf(x)
  }

  /** Session settings the file sink runs need: one file-sink log file per batch (no compaction). */
  val conf: Map[String, String] = Map("spark.sql.streaming.fileSink.log.compactInterval" -> "100000")

  /** Input rows and executed batches of the runs of one query (a batch run again after a restart counts twice). */
  private final class BatchCounter extends StreamingQueryListener {
    @volatile var rows = 0L
    @volatile var queryId: java.util.UUID = _
    private var executed = 0L
    override def onQueryStarted(event: StreamingQueryListener.QueryStartedEvent): Unit = ()
    override def onQueryTerminated(event: StreamingQueryListener.QueryTerminatedEvent): Unit = synchronized(notifyAll())
    override def onQueryProgress(event: StreamingQueryListener.QueryProgressEvent): Unit = synchronized {
      if (event.progress.id == queryId && event.progress.durationMs.containsKey("addBatch")) {
        rows += event.progress.numInputRows; executed += 1
      }
      notifyAll()
    }

    /** Waits until `target` input rows were read, then for one more batch: it runs with the watermark they moved. */
    def awaitRowsAndOneMore(query: StreamingQuery, target: Long): Unit = synchronized {
      await(query)(rows >= target)
      val after = executed
      await(query)(executed > after)
    }

    private def await(query: StreamingQuery)(done: => Boolean): Unit = {
      val deadline = System.nanoTime() + 120L * 1000 * 1000 * 1000
      while (!done) {
        query.exception.foreach(e => throw e)
        if (!query.isActive || System.nanoTime() > deadline) throw new IllegalStateException("no progress within 120 s")
        wait(100L)
      }
    }
  }

  /** Concatenates per-batch outputs, ignoring which batch id carried them. */
  def concatenated(byBatch: Seq[(Long, Seq[String])]): Seq[Seq[String]] = byBatch.map(_._2)

  private[reliability] def files(dir: File): Seq[File] =
    Files.walk(dir.toPath).iterator().asScala.map(_.toFile).filter(_.isFile).toList
}
