package io.github.sparksuppress.connect

import scala.jdk.CollectionConverters._

import org.apache.spark.connect.{proto => sparkproto}
import org.apache.spark.sql.{Column, DataFrame, Row}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.connect.planner.SparkConnectPlanner
import org.apache.spark.sql.sparksuppress.{ConnectPlans, ExpressionColumns}
import org.apache.spark.sql.types.{StringType, StructField, StructType}
import org.sparkproject.connect.protobuf.{Any => ProtoAny, ByteString, CodedInputStream, InvalidProtocolBufferException}

import io.github.sparksuppress.RuntimeCompatibility
import io.github.sparksuppress.connect.proto.{Aggregate, AggregateWindowed, JoinVersioned, Metrics, Suppress}
import io.github.sparksuppress.wire.WireFacade

/**
 * The Spark Connect transport of the Python API, behind the relation plugin that each Spark line's shim declares
 * ([[SparkSuppressRelationPlugin]]; register it with
 * `spark.connect.extensions.relation.classes=io.github.sparksuppress.connect.SparkSuppressRelationPlugin`).
 *
 * Each message carries its input relation(s) and the same spec bytes the py4j transport passes; the relations become
 * DataFrames through the planner and then go through [[WireFacade]] exactly as a classic session's calls do, so
 * decoding, validation and config translation exist once.
 */
object SparkSuppressRelations {

  def transform(any: ProtoAny, planner: SparkConnectPlanner): Option[LogicalPlan] = {
    import ConnectSupport.{column, frame, message}
    // Other plugins' messages pass through untouched: the planner offers every extension to every plugin.
    if (any.is(classOf[Suppress])) ConnectSupport.nested("Suppress") {
      val m = message(any, "Suppress", Suppress.parseFrom(_: CodedInputStream))
      ConnectSupport.checkClient("Suppress", m.getClientVersion)
      Some(logical(WireFacade.suppress(frame(planner, m.getInput, "Suppress.input"), m.getSpec.toByteArray)))
    }
    else if (any.is(classOf[AggregateWindowed])) ConnectSupport.nested("AggregateWindowed") {
      val m = message(any, "AggregateWindowed", AggregateWindowed.parseFrom(_: CodedInputStream))
      ConnectSupport.checkClient("AggregateWindowed", m.getClientVersion)
      val input = frame(planner, m.getInput, "AggregateWindowed.input")
      val aggregations = m.getAggregationsList.asScala.map(column(planner, _, "AggregateWindowed.aggregations")).asJava
      Some(logical(WireFacade.aggregateWindowed(input, m.getSpec.toByteArray, aggregations)))
    }
    else if (any.is(classOf[Aggregate])) ConnectSupport.nested("Aggregate") {
      val m = message(any, "Aggregate", Aggregate.parseFrom(_: CodedInputStream))
      ConnectSupport.checkClient("Aggregate", m.getClientVersion)
      val input = frame(planner, m.getInput, "Aggregate.input")
      val aggregations = m.getAggregationsList.asScala.map(column(planner, _, "Aggregate.aggregations")).asJava
      Some(logical(WireFacade.aggregate(input, m.getSpec.toByteArray, aggregations)))
    }
    else if (any.is(classOf[JoinVersioned])) ConnectSupport.nested("JoinVersioned") {
      val m = message(any, "JoinVersioned", JoinVersioned.parseFrom(_: CodedInputStream))
      ConnectSupport.checkClient("JoinVersioned", m.getClientVersion)
      val initial = if (m.getInitialVersions.isEmpty) null
      else frame(planner, m.getInitialVersions, "JoinVersioned.initial_versions")
      Some(logical(WireFacade.joinVersioned(
        frame(planner, m.getStream, "JoinVersioned.stream"),
        frame(planner, m.getTable, "JoinVersioned.table"),
        initial,
        m.getSpec.toByteArray
      )))
    }
    else if (any.is(classOf[Metrics])) ConnectSupport.nested("Metrics") {
      val m = message(any, "Metrics", Metrics.parseFrom(_: CodedInputStream))
      ConnectSupport.checkClient("Metrics", m.getClientVersion)
      Some(ConnectSupport.metrics(planner, m.getObservationNamesList.asScala.toSeq))
    }
    else None
  }

  private def logical(df: DataFrame): LogicalPlan = df.queryExecution.logical
}

private[connect] object ConnectSupport {

  /** Clients tell their version so that a wheel and a server jar of different releases fail loudly, as in py4j. */
  val VersionMismatchPrefix = "spark-suppress version mismatch:"

  @volatile private var runtimeChecked = false

  /**
   * Refuses a `kind` message whose client is of another release, or does not say. The spark_suppress package sets
   * `client_version` in every message (`_connect._message`); proto3 reads an absent field as "", so an empty one is a
   * client that skipped the check (another client, or a message cut short), and it is refused rather than let through
   * unchecked.
   */
  def checkClient(kind: String, clientVersion: String): Unit = {
    if (!runtimeChecked) { RuntimeCompatibility.check(); runtimeChecked = true }
    val server = RuntimeCompatibility.libraryVersion
    if (clientVersion.isEmpty) {
      throw new IllegalArgumentException(
        s"spark-suppress: the client's $kind message has no client_version, so the server cannot tell " +
          s"whether the client's release matches its spark-suppress jar version $server. Send the message from the " +
          s"spark_suppress Python package of version $server (pip install spark-suppress==$server), which sets " +
          "client_version in every message; a client of its own must set client_version to that version."
      )
    }
    if (clientVersion != server) {
      // The version is the client's text, echoed back: a real one is short, anything else is cut.
      val client = if (clientVersion.length <= 40) clientVersion else clientVersion.take(40) + "…"
      throw new IllegalArgumentException(
        s"$VersionMismatchPrefix the Python package is version $client but the Spark Connect server runs the " +
          s"spark-suppress jar version $server. " +
          s"Install the spark-suppress wheel of version $server on the client, or " +
          s"start the server with the jar of version $client (--jars ${RuntimeCompatibility.jarName(client)})."
      )
    }
  }

  /**
   * How many of this library's messages may nest in one another (an operator's input that is itself an operator, a
   * string_fold inside a string_fold). A real chain is a handful deep. Each one's relations travel as bytes, which
   * protobuf's recursion limit does not see across, so without a bound a client can nest them until the planner
   * overflows its stack (at about a thousand here).
   */
  val MaxNesting = 64

  private val depth = ThreadLocal.withInitial[Integer](() => 0)

  /**
   * Runs the translation of one message, refusing nesting deeper than [[MaxNesting]]; the outermost one also turns a
   * stack overflow (Spark's own relations nested deep inside each message's bytes) into a clear error, where the
   * client would otherwise get an UNKNOWN status with no message.
   */
  def nested[T](kind: String)(body: => T): T = {
    val d: Int = depth.get
    if (d >= MaxNesting) {
      throw new IllegalArgumentException(
        s"spark-suppress: the client's plan nests more than $MaxNesting spark-suppress operators in one another (at " +
          s"a $kind message). No chain of operators is that deep: the client's plan is malformed."
      )
    }
    depth.set(d + 1)
    try {
      if (d > 0) body
      else
        try body
        catch {
          case _: StackOverflowError =>
            throw new IllegalArgumentException(
              s"spark-suppress: the client's plan is nested too deeply for the server to translate (a $kind message " +
                "whose inputs overflowed the planner's stack). Build the query in fewer nested steps."
            )
        }
    } finally depth.set(d)
  }

  private val RecursionLimitSetting = "spark.connect.grpc.marshallerRecursionLimit"

  /**
   * A message of ours or of Spark's from the client's bytes, as Spark parses the request itself: to the nesting depth
   * Spark's Connect server allows (its default parser would stop at 100 levels, which an ordinary plan of fifty
   * `withColumn`s passes), and aliasing the bytes fields rather than copying them, so that nested messages cost no
   * memory per level. A parse error names the field.
   */
  private def parse[T](planner: SparkConnectPlanner, bytes: ByteString, what: String)(
      parser: CodedInputStream => T
  ): T = {
    val in = bytes.newCodedInput()
    in.enableAliasing(true)
    in.setRecursionLimit(session(planner).sparkContext.getConf.getInt(RecursionLimitSetting, 1024))
    try parser(in)
    catch {
      case e: InvalidProtocolBufferException =>
        throw new IllegalArgumentException(
          s"spark-suppress: the client's $what is not a valid protobuf message (${e.getMessage}). The spark_suppress " +
            "Python package of the server jar's release writes these messages; the bytes were damaged or forged."
        )
    }
  }

  /** The plugin's own message inside the extension's Any (the caller has checked its type). */
  def message[T](any: ProtoAny, kind: String, parser: CodedInputStream => T): T = {
    val in = any.getValue.newCodedInput()
    in.enableAliasing(true)
    try parser(in)
    catch {
      case e: InvalidProtocolBufferException =>
        throw new IllegalArgumentException(
          s"spark-suppress: the client's $kind message is not a valid protobuf message (${e.getMessage}). The " +
            "spark_suppress Python package of the server jar's release writes these messages; the bytes were " +
            "damaged or forged."
        )
    }
  }

  // The session through its holder: Spark 3.5's planner keeps its own `session` to Spark's connect package.
  private def session(planner: SparkConnectPlanner) = planner.sessionHolder.session

  def frame(planner: SparkConnectPlanner, relation: ByteString, field: String): DataFrame = {
    val parsed =
      parse(planner, relation, s"$field (a spark.connect.Relation)")(sparkproto.Relation.parseFrom(_: CodedInputStream))
    val plan = fromSpark(s"$field (a spark.connect.Relation)")(planner.transformRelation(parsed))
    ConnectPlans.frame(session(planner), plan)
  }

  /**
   * What Spark's own planner makes of a relation or expression the client nested in one of our messages. Spark's
   * planner reports some malformed plans through internal exceptions (on 3.5 to 4.2, e.g. an IndexOutOfBounds for an
   * unset relation, or an InvalidPlanInput the 3.5 client cannot name); those reach the client as a clear error that
   * names our field. Errors that are already clear pass unchanged: ours (IllegalArgumentException, also from an
   * operator nested in this one) and Spark's analysis errors.
   */
  private def fromSpark[T](what: String)(body: => T): T =
    try body
    catch {
      case e: IllegalArgumentException => throw e
      case e: org.apache.spark.sql.AnalysisException => throw e
      case scala.util.control.NonFatal(e) =>
        throw new IllegalArgumentException(
          s"spark-suppress: the client's $what is not a plan Spark's Connect planner can build: ${e.getMessage}",
          e
        )
    }

  /**
   * The metrics document of WireFacade.metrics for the operators observed under `observationNames`: a Connect client
   * cannot hand over the query object, so it names what the query's progress reports observed. Only the asking
   * session's operators answer: the server is shared by other users' sessions.
   */
  def metrics(planner: SparkConnectPlanner, observationNames: Seq[String]): LogicalPlan = {
    val json = WireFacade.metricsOfObservations(session(planner), observationNames.asJava)
    val schema = StructType(Seq(StructField("metrics", StringType, nullable = false)))
    session(planner).createDataFrame(java.util.Collections.singletonList(Row(json)), schema).queryExecution.logical
  }

  def column(planner: SparkConnectPlanner, expression: ByteString, field: String): Column = {
    val parsed = parse(planner, expression, s"$field (a spark.connect.Expression)")(
      sparkproto.Expression.parseFrom(_: CodedInputStream)
    )
    ExpressionColumns.column(fromSpark(s"$field (a spark.connect.Expression)")(planner.transformExpression(parsed)))
  }
}
