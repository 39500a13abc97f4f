package io.github.sparksuppress.connect

import scala.jdk.CollectionConverters._

import org.apache.spark.connect.{proto => sparkproto}
import org.apache.spark.sql.{Column, DataFrame, Row}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.connect.planner.SparkConnectPlanner
import org.apache.spark.sql.sparksuppress.{ConnectPlans, ExpressionColumns}
import org.apache.spark.sql.types.{StringType, StructField, StructType}
import org.sparkproject.connect.protobuf.{Any => ProtoAny, ByteString}

import io.github.sparksuppress.RuntimeCompatibility
import io.github.sparksuppress.connect.proto.{Aggregate, AggregateWindowed, JoinVersioned, Metrics, Suppress}
import io.github.sparksuppress.python.PythonFacade

/**
 * The Spark Connect transport of the Python API, behind the relation plugin that each Spark line's shim declares
 * ([[SparkSuppressRelationPlugin]]; register it with
 * `spark.connect.extensions.relation.classes=io.github.sparksuppress.connect.SparkSuppressRelationPlugin`).
 *
 * Each message carries its input relation(s) and the same JSON spec the py4j transport passes; the relations become
 * DataFrames through the planner and then go through [[PythonFacade]] exactly as a classic session's calls do, so
 * validation and config translation exist once.
 */
object SparkSuppressRelations {

  def transform(any: ProtoAny, planner: SparkConnectPlanner): Option[LogicalPlan] = {
    // Other plugins' messages pass through untouched: the planner offers every extension to every plugin.
    if (any.is(classOf[Suppress])) {
      val m = any.unpack(classOf[Suppress])
      ConnectSupport.checkClient(m.getClientVersion)
      Some(logical(PythonFacade.suppress(ConnectSupport.frame(planner, m.getInput), m.getSpecJson)))
    } else if (any.is(classOf[AggregateWindowed])) {
      val m = any.unpack(classOf[AggregateWindowed])
      ConnectSupport.checkClient(m.getClientVersion)
      val input = ConnectSupport.frame(planner, m.getInput)
      val aggregations = m.getAggregationsList.asScala.map(ConnectSupport.column(planner, _)).asJava
      Some(logical(PythonFacade.aggregateWindowed(input, m.getSpecJson, aggregations)))
    } else if (any.is(classOf[Aggregate])) {
      val m = any.unpack(classOf[Aggregate])
      ConnectSupport.checkClient(m.getClientVersion)
      val input = ConnectSupport.frame(planner, m.getInput)
      val aggregations = m.getAggregationsList.asScala.map(ConnectSupport.column(planner, _)).asJava
      Some(logical(PythonFacade.aggregate(input, m.getSpecJson, aggregations)))
    } else if (any.is(classOf[JoinVersioned])) {
      val m = any.unpack(classOf[JoinVersioned])
      ConnectSupport.checkClient(m.getClientVersion)
      val initial = if (m.getInitialVersions.isEmpty) null else ConnectSupport.frame(planner, m.getInitialVersions)
      Some(logical(PythonFacade.joinVersioned(
        ConnectSupport.frame(planner, m.getStream), ConnectSupport.frame(planner, m.getTable), initial, m.getSpecJson)))
    } else if (any.is(classOf[Metrics])) {
      val m = any.unpack(classOf[Metrics])
      ConnectSupport.checkClient(m.getClientVersion)
      Some(ConnectSupport.metrics(planner, m.getObservationNamesList.asScala.toSeq))
    } else None
  }

  private def logical(df: DataFrame): LogicalPlan = df.queryExecution.logical
}

private[connect] object ConnectSupport {

  /** Clients tell their version so that a wheel and a server jar of different releases fail loudly, as in py4j. */
  val VersionMismatchPrefix = "spark-suppress version mismatch:"

  @volatile private var runtimeChecked = false

  def checkClient(clientVersion: String): Unit = {
    if (!runtimeChecked) { RuntimeCompatibility.check(); runtimeChecked = true }
    val server = RuntimeCompatibility.libraryVersion
    if (clientVersion.nonEmpty && clientVersion != server) {
      throw new IllegalArgumentException(
        s"$VersionMismatchPrefix the Python package is version $clientVersion but the Spark Connect server runs the " +
          s"spark-suppress jar version $server. Install the spark-suppress wheel of version $server on the client, or " +
          s"start the server with the jar of version $clientVersion (--jars ${RuntimeCompatibility.jarName(clientVersion)}).")
    }
  }

  // The session through its holder: Spark 3.5's planner keeps its own `session` to Spark's connect package.
  private def session(planner: SparkConnectPlanner) = planner.sessionHolder.session

  def frame(planner: SparkConnectPlanner, relation: ByteString): DataFrame =
    ConnectPlans.frame(session(planner), planner.transformRelation(sparkproto.Relation.parseFrom(relation)))

  /**
   * The metrics document of PythonFacade.metrics for the operators observed under `observationNames`: a Connect
   * client cannot hand over the query object, so it names what the query's progress reports observed. Only the
   * asking session's operators answer: the server is shared by other users' sessions.
   */
  def metrics(planner: SparkConnectPlanner, observationNames: Seq[String]): LogicalPlan = {
    val json = PythonFacade.metricsOfObservations(session(planner), observationNames.asJava)
    val schema = StructType(Seq(StructField("metrics", StringType, nullable = false)))
    session(planner).createDataFrame(java.util.Collections.singletonList(Row(json)), schema).queryExecution.logical
  }

  def column(planner: SparkConnectPlanner, expression: ByteString): Column =
    ExpressionColumns.column(planner.transformExpression(sparkproto.Expression.parseFrom(expression)))
}
