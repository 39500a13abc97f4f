package io.github.sparksuppress.python

import java.time.Duration

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.spark.sql.{Column, DataFrame, SparkSession}
import org.apache.spark.sql.streaming.StreamingQuery
import org.apache.spark.sql.types.{DataType, StructType}

import io.github.sparksuppress.RuntimeCompatibility
import io.github.sparksuppress.api._
import io.github.sparksuppress.testing.TestDriver

/**
 * The one entry point the Python package calls through py4j. Arguments cross as primitives: DataFrames, strings
 * and JSON documents of plain values (durations in milliseconds); results come back as DataFrames or JSON.
 * Every configuration is rebuilt here through the public Scala API, so Python gets the same validation, with
 * messages in the Python API's spelling ([[Spelling]]): Python itself checks only the types of its arguments.
 */
object PythonFacade {
  private val mapper = new ObjectMapper()

  def version(): String = RuntimeCompatibility.libraryVersion

  /** Fails with a clear message when the JVM runs a Spark or Scala this jar was not built for. */
  def checkRuntime(): Unit = RuntimeCompatibility.check()

  /**
   * Builds a suppress operator. `specJson` holds: key (list), timestamp, window (null, {"column": c} or
   * {"start": s, "end": e}), graceMs (null or ms), tombstone (null or column), late ("drop" or "emit"),
   * idleTimeoutMs (null or ms), and suppressed: {mode, timeLimitMs, bufferTime, clock, name, buffer: {maxRecords,
   * maxBytes, whenFull}} (null bounds = none).
   */
  def suppress(df: DataFrame, specJson: String): DataFrame = Spelling.forPython {
    val spec = mapper.readTree(specJson)
    val keys = spec.get("key").elements().asScala.map(_.asText()).toList
    val window = optional(spec, "window").map { w =>
      if (w.has("column")) WindowColumns.struct(w.get("column").asText())
      else WindowColumns.startEnd(w.get("start").asText(), w.get("end").asText())
    }
    val op = Suppress(
      key = keys,
      timestamp = spec.get("timestamp").asText(),
      suppressed = suppressed(spec.get("suppressed")),
      window = window,
      grace = optional(spec, "graceMs").map(g => Duration.ofMillis(g.asLong())),
      tombstone = optional(spec, "tombstone").map(_.asText()),
      lateRecords = lateRecords(spec))
    idleTimeout(spec).map(op.withIdleTimeout).getOrElse(op).apply(df)
  }

  private def idleTimeout(spec: JsonNode): Option[Duration] =
    optional(spec, "idleTimeoutMs").map(t => Duration.ofMillis(t.asLong()))

  private def lateRecords(spec: JsonNode): LateRecords =
    optional(spec, "late").map(l => LateRecords.fromName(l.asText())).getOrElse(LateRecords.Drop)

  private[python] def suppressed(s: JsonNode): Suppressed = {
    val buffer = bufferConfig(s.get("buffer"))
    val base: Suppressed = s.get("mode").asText() match {
      case "untilTimeLimit" =>
        var t = Suppressed.untilTimeLimit(Duration.ofMillis(s.get("timeLimitMs").asLong()), buffer)
          .withClock(SuppressionClock.fromName(optional(s, "clock").map(_.asText()).getOrElse("event")))
        if (optional(s, "bufferTime").exists(_.asText() == "latest")) t = t.withTimerReset()
        t
      case "untilWindowCloses" =>
        if (optional(s, "bufferTime").exists(_.asText() == "latest")) {
          throw new IllegalArgumentException("withTimerReset() applies to untilTimeLimit only: final results leave " +
            "when their window closes, whatever the updates' timestamps.")
        }
        buffer match {
          case strict: StrictBufferConfig => Suppressed.untilWindowCloses(strict)
          case eager =>
            throw new IllegalArgumentException(
              s"untilWindowCloses accepts only strict buffer configs (unbounded, shutDownWhenFull or spillToDisk); " +
                s"got $eager, which may emit early.")
        }
      case other => throw new IllegalArgumentException(s"unknown suppression mode '$other'")
    }
    optional(s, "name").map(n => base.withName(n.asText())).getOrElse(base)
  }

  private def bufferConfig(b: JsonNode): BufferConfig = {
    val records = optional(b, "maxRecords").map(_.asLong())
    val bytes = optional(b, "maxBytes").map(_.asLong())
    val bounded = records.foldLeft(BufferConfig.unbounded(): BufferConfig)((c, n) => c.withMaxRecords(n))
    val model = EntrySizeModel.fromName(optional(b, "sizeModel").map(_.asText()).getOrElse("kafka"))
    val withBytes = bytes.foldLeft(bounded)((c, n) => c.withMaxBytes(n)).withSizeModel(model)
    b.get("whenFull").asText() match {
      case "emitEarly" => withBytes.emitEarlyWhenFull()
      case "shutDown" => withBytes.shutDownWhenFull()
      case "spillToDisk" => withBytes.spillToDisk()
      case "unbounded" => BufferConfig.unbounded().withSizeModel(model)
      case other => throw new IllegalArgumentException(s"unknown buffer-full strategy '$other'")
    }
  }

  // Stream-table join (KIP-923 on KIP-889).

  /**
   * Builds a stream-table join. `specJson` holds: on (list), streamTimestamp, tableTimestamp, graceMs (null for
   * none), historyRetentionMs (null: a non-versioned table), how ("inner" or "left"), tombstone (null or a
   * column), name (null or a string), releaseOnWatermark and idleTimeoutMs (null or ms). `initialVersions` is a
   * static DataFrame, or null.
   */
  def joinVersioned(stream: DataFrame, table: DataFrame, initialVersions: DataFrame, specJson: String): DataFrame = Spelling.forPython {
    val spec = mapper.readTree(specJson)
    val changelog = ChangelogTable.nonVersioned(table, spec.get("tableTimestamp").asText())
    val retained = optional(spec, "historyRetentionMs").map(r => changelog.withHistoryRetention(Duration.ofMillis(r.asLong())))
      .getOrElse(changelog)
    val tombstoned = optional(spec, "tombstone").map(t => retained.withTombstone(t.asText())).getOrElse(retained)
    val seeded = Option(initialVersions).map(tombstoned.withInitialVersions).getOrElse(tombstoned)
    val base = Joined.forHow(spec.get("how").asText())
    val graced = optional(spec, "graceMs").map(g => base.withGracePeriod(Duration.ofMillis(g.asLong()))).getOrElse(base)
    val named = optional(spec, "name").map(n => graced.withName(n.asText())).getOrElse(graced)
    val timed = idleTimeout(spec).map(named.withIdleTimeout).getOrElse(named)
    val joined = if (optional(spec, "releaseOnWatermark").exists(!_.asBoolean())) timed.withoutWatermarkRelease() else timed
    val on = spec.get("on").elements().asScala.map(_.asText()).toList
    StreamTableJoin(on, spec.get("streamTimestamp").asText(), seeded, joined).apply(stream)
  }


  // Windowed aggregation with emit strategies (KIP-825).

  /**
   * Builds a windowed aggregation. `specJson` holds: key (list), timestamp, windows ({type: "time", sizeMs,
   * advanceMs, graceMs} | {type: "sliding", timeDifferenceMs, graceMs} | {type: "session", gapMs, graceMs}),
   * emit ("onWindowClose" | "onWindowUpdate"), name (or null), late ("drop" or "emit") and idleTimeoutMs (null or
   * ms); `aggregations` are the aggregate columns.
   */
  def aggregateWindowed(df: DataFrame, specJson: String, aggregations: java.util.List[Column]): DataFrame = Spelling.forPython {
    val spec = mapper.readTree(specJson)
    val op = AggregateWindowed(
      key = spec.get("key").elements().asScala.map(_.asText()).toList,
      timestamp = spec.get("timestamp").asText(),
      windows = windows(spec.get("windows")),
      aggregations = aggregations.asScala.toList,
      emit = spec.get("emit").asText() match {
        case "onWindowClose" => EmitStrategy.onWindowClose()
        case "onWindowUpdate" => EmitStrategy.onWindowUpdate()
        case other => throw new IllegalArgumentException(s"unknown emit strategy '$other'")
      },
      lateRecords = lateRecords(spec))
    val named = optional(spec, "name").map(n => op.withName(n.asText())).getOrElse(op)
    idleTimeout(spec).map(named.withIdleTimeout).getOrElse(named).apply(df)
  }

  /**
   * Builds a non-windowed aggregation (Kafka's KTable aggregation). `specJson` holds: key (list), timestamp and
   * name (or null); `aggregations` are the aggregate columns.
   */
  def aggregate(df: DataFrame, specJson: String, aggregations: java.util.List[Column]): DataFrame = Spelling.forPython {
    val spec = mapper.readTree(specJson)
    val op = Aggregate(
      key = spec.get("key").elements().asScala.map(_.asText()).toList,
      timestamp = spec.get("timestamp").asText(),
      aggregations = aggregations.asScala.toList)
    optional(spec, "name").map(n => op.withName(n.asText())).getOrElse(op).apply(df)
  }

  private def windows(w: JsonNode): Windows = {
    def ms(field: String) = Duration.ofMillis(w.get(field).asLong())
    w.get("type").asText() match {
      case "time" => TimeWindows.ofSizeAndGrace(ms("sizeMs"), ms("graceMs")).advanceBy(ms("advanceMs"))
      case "sliding" => SlidingWindows.ofTimeDifferenceAndGrace(ms("timeDifferenceMs"), ms("graceMs"))
      case "session" => SessionWindows.ofInactivityGapAndGrace(ms("gapMs"), ms("graceMs"))
      case other => throw new IllegalArgumentException(s"unknown windows type '$other'")
    }
  }

  /** The aggregate column folding `column` with a [[StringFold]] (Kafka's test aggregation). */
  def stringFold(column: Column, initial: String, separator: String): Column =
    Spelling.forPython(StringFold.column(column, initial, separator))


  /** Metrics of the spark-suppress operators of `query`, as JSON: {operatorName: {metric: value}}. */
  def metrics(query: StreamingQuery): String = metricsJson(Metrics.forQuery(query))

  /**
   * As [[metrics]], for the operators observed under these names in a query's progress reports, answered only for
   * operators of `session` (the asking Spark Connect session).
   */
  def metricsOfObservations(session: SparkSession, observationNames: java.util.List[String]): String =
    metricsJson(Metrics.forObservations(session, observationNames.asScala.toSeq))

  private def metricsJson(m: Map[String, Map[String, Double]]): String =
    mapper.writeValueAsString(m.map { case (k, v) => k -> v.asJava }.asJava)

  // Testing.

  def testDriver(spark: SparkSession): TestDriver = TestDriver(spark)

  def addInput(driver: TestDriver, name: String, schemaJson: String, timestamp: String, watermarkDelay: String): DataFrame =
    driver.addInput(name, DataType.fromJson(schemaJson).asInstanceOf[StructType], timestamp, watermarkDelay)

  /** Feeds the rows of a (batch) DataFrame to input `name` as one step; returns what was emitted, as a DataFrame. */
  def step(driver: TestDriver, name: String, rows: DataFrame): DataFrame =
    emittedFrame(driver, driver.stepInput(name, rows.collect().toSeq))

  def advance(driver: TestDriver): DataFrame = emittedFrame(driver, driver.advance())

  /** Lets `ms` of wall-clock time pass without input ([[TestDriver.idle]]); returns what was emitted meanwhile. */
  def idle(driver: TestDriver, ms: Long): DataFrame = emittedFrame(driver, driver.idle(Duration.ofMillis(ms)))

  private def emittedFrame(driver: TestDriver, rows: Seq[org.apache.spark.sql.Row]): DataFrame = {
    val schema = driver.outputSchema
    driver.spark.createDataFrame(rows.asJava, schema)
  }

  private def optional(node: JsonNode, field: String): Option[JsonNode] =
    Option(node).flatMap(n => Option(n.get(field))).filterNot(_.isNull)
}
