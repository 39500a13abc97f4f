package io.github.sparksuppress.wire

import java.time.Duration

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.sql.{Column, DataFrame, SparkSession}
import org.apache.spark.sql.streaming.StreamingQuery
import org.apache.spark.sql.types.{DataType, StructType}

import io.github.sparksuppress.RuntimeCompatibility
import io.github.sparksuppress.api._
import io.github.sparksuppress.testing.TestDriver

/**
 * The JVM entry points of the Python package, for both its transports: py4j calls them directly, the Spark Connect
 * plugin after turning the client's relations into DataFrames. Arguments cross as DataFrames, columns, strings and
 * each operator's spec message (proto/spark_suppress/spec.proto) as bytes, which [[SpecDecoder]] rebuilds through the
 * public Scala API, so both transports get the same validation, with messages in the Python API's spelling
 * ([[Spelling]]); results come back as DataFrames or JSON.
 */
object WireFacade {
  private val mapper = new ObjectMapper()

  def version(): String = RuntimeCompatibility.libraryVersion

  /** Fails with a clear message when the JVM runs a Spark or Scala this jar was not built for. */
  def checkRuntime(): Unit = RuntimeCompatibility.check()

  /** Builds a suppress operator from a serialized `SuppressSpec`. */
  def suppress(df: DataFrame, spec: Array[Byte]): DataFrame = Spelling.forPython(SpecDecoder.suppress(spec)(df))

  /**
   * Builds a stream-table join from a serialized `JoinVersionedSpec`; `initialVersions` is a static DataFrame, or
   * null.
   */
  def joinVersioned(stream: DataFrame, table: DataFrame, initialVersions: DataFrame, spec: Array[Byte]): DataFrame =
    Spelling.forPython(SpecDecoder.joinVersioned(spec, table, Option(initialVersions))(stream))

  /** Builds a windowed aggregation from a serialized `AggregateWindowedSpec` and its aggregate columns. */
  def aggregateWindowed(df: DataFrame, spec: Array[Byte], aggregations: java.util.List[Column]): DataFrame =
    Spelling.forPython(SpecDecoder.aggregateWindowed(spec, aggregations.asScala.toList)(df))

  /** Builds a non-windowed aggregation (Kafka's KTable aggregation) from a serialized `AggregateSpec`. */
  def aggregate(df: DataFrame, spec: Array[Byte], aggregations: java.util.List[Column]): DataFrame =
    Spelling.forPython(SpecDecoder.aggregate(spec, aggregations.asScala.toList)(df))

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

  /** Feeds rows, pickled ([[PickledRows]]), to input `name` as one step; returns what was emitted, as a DataFrame. */
  def step(driver: TestDriver, name: String, pickledRows: Array[Byte]): DataFrame =
    emittedFrame(driver, driver.stepInput(name, PickledRows.decode(pickledRows, driver.inputSchema(name))))

  def advance(driver: TestDriver): DataFrame = emittedFrame(driver, driver.advance())

  /** Lets `ms` of wall-clock time pass without input ([[TestDriver.idle]]); returns what was emitted meanwhile. */
  def idle(driver: TestDriver, ms: Long): DataFrame = emittedFrame(driver, driver.idle(Duration.ofMillis(ms)))

  private def emittedFrame(driver: TestDriver, rows: Seq[org.apache.spark.sql.Row]): DataFrame = {
    val schema = driver.outputSchema
    driver.spark.createDataFrame(rows.asJava, schema)
  }
}
