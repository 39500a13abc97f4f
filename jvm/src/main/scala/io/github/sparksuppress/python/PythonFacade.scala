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
 * The one entry point the Python package calls through py4j. Arguments cross as primitives: DataFrames, strings and
 * JSON documents of plain values (durations in milliseconds); results come back as DataFrames or JSON. Every
 * configuration is rebuilt here through the public Scala API, so Python gets the same validation, with messages in
 * the Python API's spelling ([[Spelling]]): Python itself checks only the types of its arguments.
 */
object PythonFacade {
  private val mapper = new ObjectMapper()

  def version(): String = RuntimeCompatibility.libraryVersion

  /** Fails with a clear message when the JVM runs a Spark or Scala this jar was not built for. */
  def checkRuntime(): Unit = RuntimeCompatibility.check()

  /**
   * Builds a suppress operator. `specJson` holds: key (list), timestamp, window (null, {"column": c} or {"start": s,
   * "end": e}), graceMs (null or ms), tombstone (null or column), late ("drop" or "emit"), idleTimeoutMs (null or
   * ms), and suppressed: {mode, timeLimitMs, bufferTime, clock, name, buffer: {maxRecords, maxBytes, whenFull}} (null
   * bounds = none).
   */
  def suppress(df: DataFrame, specJson: String): DataFrame = Spelling.forPython {
    val spec = Spec.parse(specJson)
    val keys = spec("key").texts
    val window = spec.opt("window").map { w =>
      if (w.has("column")) WindowColumns.struct(w("column").text)
      else WindowColumns.startEnd(w("start").text, w("end").text)
    }
    val op = Suppress(
      key = keys,
      timestamp = spec("timestamp").text,
      suppressed = suppressed(spec("suppressed")),
      window = window,
      grace = spec.opt("graceMs").map(_.millis),
      tombstone = spec.opt("tombstone").map(_.text),
      lateRecords = lateRecords(spec)
    )
    idleTimeout(spec).map(op.withIdleTimeout).getOrElse(op).apply(df)
  }

  private def idleTimeout(spec: Spec): Option[Duration] = spec.opt("idleTimeoutMs").map(_.millis)

  private def lateRecords(spec: Spec): LateRecords =
    spec.opt("late").map(l => LateRecords.fromName(l.text)).getOrElse(LateRecords.Drop)

  private def suppressed(s: Spec): Suppressed = {
    val buffer = bufferConfig(s("buffer"))
    val base: Suppressed = s("mode").text match {
      case "untilTimeLimit" =>
        var t = Suppressed.untilTimeLimit(s("timeLimitMs").millis, buffer)
          .withClock(SuppressionClock.fromName(s.opt("clock").map(_.text).getOrElse("event")))
        if (timerReset(s)) t = t.withTimerReset()
        t
      case "untilWindowCloses" =>
        if (timerReset(s)) {
          throw new IllegalArgumentException("withTimerReset() applies to untilTimeLimit only: final results leave " +
            "when their window closes, whatever the updates' timestamps.")
        }
        buffer match {
          case strict: StrictBufferConfig => Suppressed.untilWindowCloses(strict)
          case eager =>
            throw new IllegalArgumentException(
              s"untilWindowCloses accepts only strict buffer configs (unbounded, shutDownWhenFull or spillToDisk); " +
                s"got $eager, which may emit early."
            )
        }
      case other => throw new IllegalArgumentException(s"unknown suppression mode '${Spec.shown(other)}'")
    }
    s.opt("name").map(n => base.withName(n.text)).getOrElse(base)
  }

  /** bufferTime: "first" (the default) keeps an entry's first due time, "latest" resets it at every update. */
  private def timerReset(s: Spec): Boolean = s.opt("bufferTime").map(_.text) match {
    case None | Some("first") => false
    case Some("latest") => true
    case Some(other) =>
      throw new IllegalArgumentException(s"unknown buffer time '${Spec.shown(other)}' ('first' or 'latest')")
  }

  private def bufferConfig(b: Spec): BufferConfig = {
    val records = b.opt("maxRecords").map(_.long)
    val bytes = b.opt("maxBytes").map(_.long)
    val bounded = records.foldLeft(BufferConfig.unbounded(): BufferConfig)((c, n) => c.withMaxRecords(n))
    val model = EntrySizeModel.fromName(b.opt("sizeModel").map(_.text).getOrElse("kafka"))
    val withBytes = bytes.foldLeft(bounded)((c, n) => c.withMaxBytes(n)).withSizeModel(model)
    b("whenFull").text match {
      case "emitEarly" => withBytes.emitEarlyWhenFull()
      case "shutDown" => withBytes.shutDownWhenFull()
      case "spillToDisk" => withBytes.spillToDisk()
      case "unbounded" => BufferConfig.unbounded().withSizeModel(model)
      case other => throw new IllegalArgumentException(s"unknown buffer-full strategy '${Spec.shown(other)}'")
    }
  }

  // Stream-table join (KIP-923 on KIP-889).

  /**
   * Builds a stream-table join. `specJson` holds: on (list), streamTimestamp, tableTimestamp, graceMs (null for
   * none), historyRetentionMs (null: a non-versioned table), how ("inner" or "left"), tombstone (null or a column),
   * name (null or a string), releaseOnWatermark and idleTimeoutMs (null or ms). `initialVersions` is a static
   * DataFrame, or null.
   */
  def joinVersioned(stream: DataFrame, table: DataFrame, initialVersions: DataFrame, specJson: String): DataFrame =
    Spelling.forPython {
      val spec = Spec.parse(specJson)
      val changelog = ChangelogTable.nonVersioned(table, spec("tableTimestamp").text)
      val retained = spec.opt("historyRetentionMs").map(r => changelog.withHistoryRetention(r.millis))
        .getOrElse(changelog)
      val tombstoned = spec.opt("tombstone").map(t => retained.withTombstone(t.text)).getOrElse(retained)
      val seeded = Option(initialVersions).map(tombstoned.withInitialVersions).getOrElse(tombstoned)
      val base = Joined.forHow(spec("how").text)
      val graced = spec.opt("graceMs").map(g => base.withGracePeriod(g.millis)).getOrElse(base)
      val named = spec.opt("name").map(n => graced.withName(n.text)).getOrElse(graced)
      val timed = idleTimeout(spec).map(named.withIdleTimeout).getOrElse(named)
      val joined = if (spec.opt("releaseOnWatermark").exists(!_.boolean)) timed.withoutWatermarkRelease() else timed
      val on = spec("on").texts
      StreamTableJoin(on, spec("streamTimestamp").text, seeded, joined).apply(stream)
    }

  // Windowed aggregation with emit strategies (KIP-825).

  /**
   * Builds a windowed aggregation. `specJson` holds: key (list), timestamp, windows ({type: "time", sizeMs,
   * advanceMs, graceMs} | {type: "sliding", timeDifferenceMs, graceMs} | {type: "session", gapMs, graceMs}), emit
   * ("onWindowClose" | "onWindowUpdate"), name (or null), late ("drop" or "emit") and idleTimeoutMs (null or ms);
   * `aggregations` are the aggregate columns.
   */
  def aggregateWindowed(df: DataFrame, specJson: String, aggregations: java.util.List[Column]): DataFrame =
    Spelling.forPython {
      val spec = Spec.parse(specJson)
      val op = AggregateWindowed(
        key = spec("key").texts,
        timestamp = spec("timestamp").text,
        windows = windows(spec("windows")),
        aggregations = aggregations.asScala.toList,
        emit = spec("emit").text match {
          case "onWindowClose" => EmitStrategy.onWindowClose()
          case "onWindowUpdate" => EmitStrategy.onWindowUpdate()
          case other => throw new IllegalArgumentException(s"unknown emit strategy '${Spec.shown(other)}'")
        },
        lateRecords = lateRecords(spec)
      )
      val named = spec.opt("name").map(n => op.withName(n.text)).getOrElse(op)
      idleTimeout(spec).map(named.withIdleTimeout).getOrElse(named).apply(df)
    }

  /**
   * Builds a non-windowed aggregation (Kafka's KTable aggregation). `specJson` holds: key (list), timestamp and name
   * (or null); `aggregations` are the aggregate columns.
   */
  def aggregate(df: DataFrame, specJson: String, aggregations: java.util.List[Column]): DataFrame = Spelling.forPython {
    val spec = Spec.parse(specJson)
    val op = Aggregate(
      key = spec("key").texts,
      timestamp = spec("timestamp").text,
      aggregations = aggregations.asScala.toList
    )
    spec.opt("name").map(n => op.withName(n.text)).getOrElse(op).apply(df)
  }

  private def windows(w: Spec): Windows = {
    def ms(field: String) = w(field).millis
    w("type").text match {
      case "time" => TimeWindows.ofSizeAndGrace(ms("sizeMs"), ms("graceMs")).advanceBy(ms("advanceMs"))
      case "sliding" => SlidingWindows.ofTimeDifferenceAndGrace(ms("timeDifferenceMs"), ms("graceMs"))
      case "session" => SessionWindows.ofInactivityGapAndGrace(ms("gapMs"), ms("graceMs"))
      case other => throw new IllegalArgumentException(s"unknown windows type '${Spec.shown(other)}'")
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

  def addInput(
      driver: TestDriver,
      name: String,
      schemaJson: String,
      timestamp: String,
      watermarkDelay: String
  ): DataFrame =
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
}

/**
 * A spec as the client sent it, read strictly. The Python package writes it, but a Spark Connect server takes the
 * bytes from any client, so a missing field or one of another JSON type fails with its path named, rather than with a
 * null pointer or one of Jackson's coercions (`asLong` of "abc" is 0: a silent zero duration).
 */
private[python] final class Spec private (node: JsonNode, path: String) {
  import Spec.malformed

  def apply(field: String): Spec = opt(field).getOrElse(throw malformed(s"`$path.$field` is missing"))

  /** The field, or None when it is absent or null (the spec's way of saying "not set"). */
  def opt(field: String): Option[Spec] = {
    if (!node.isObject) throw malformed(s"`$path` must be an object, got ${Spec.describe(node)}")
    Option(node.get(field)).filterNot(_.isNull).map(new Spec(_, s"$path.$field"))
  }

  def has(field: String): Boolean = opt(field).isDefined

  def text: String =
    if (node.isTextual) node.asText() else throw malformed(s"`$path` must be a string, got ${Spec.describe(node)}")

  def long: Long =
    if (node.isIntegralNumber && node.canConvertToLong) node.asLong()
    else throw malformed(s"`$path` must be a whole number, got ${Spec.describe(node)}")

  def millis: Duration = Duration.ofMillis(long)

  def boolean: Boolean =
    if (node.isBoolean) node.asBoolean()
    else throw malformed(s"`$path` must be true or false, got ${Spec.describe(node)}")

  def texts: List[String] =
    if (node.isArray) node.elements().asScala.zipWithIndex.map { case (e, i) => new Spec(e, s"$path[$i]").text }.toList
    else throw malformed(s"`$path` must be a list of strings, got ${Spec.describe(node)}")
}

private[python] object Spec {
  private val mapper = new ObjectMapper()

  def parse(json: String): Spec = {
    val root =
      try mapper.readTree(Option(json).getOrElse(""))
      catch {
        case e: com.fasterxml.jackson.core.JsonProcessingException =>
          throw malformed(s"the spec is not JSON (${shown(e.getOriginalMessage)})")
      }
    if (root == null || !root.isObject) throw malformed(s"the spec must be a JSON object, got ${describe(root)}")
    new Spec(root, "spec")
  }

  /** A value of the client's, cut short: the error goes back to the client and into the server's log. */
  def shown(value: String): String = if (value.length <= 80) value else value.take(80) + s"… (${value.length} chars)"

  private def describe(node: JsonNode): String =
    if (node == null || node.isMissingNode) "nothing"
    else s"${node.getNodeType.toString.toLowerCase} ${shown(node.toString)}"

  def malformed(what: String): IllegalArgumentException = new IllegalArgumentException(
    s"malformed operator spec: $what. The spark_suppress Python package writes this spec (PythonFacade documents " +
      "its fields); a client of the same release as the server's jar sends a well-formed one."
  )
}
