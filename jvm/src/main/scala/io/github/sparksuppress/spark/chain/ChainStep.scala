package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression, NamedExpression}

import io.github.sparksuppress.spark.join.StreamTableJoinRequest
import io.github.sparksuppress.spark.window.WindowAggregateRequest

/** One operator of this library as a chain step, as the API hands it over. */
private[sparksuppress] sealed trait ChainStep {

  /** How errors name the operator (Python and Scala spellings alike). */
  def kind: String
  def name: String
  def key: Seq[String]
  def timestamp: String

  /** The name the user gave the operator, if any (it guards the operator's state in the checkpoint). */
  def explicitName: Option[String] = None

  /** The operator's idle timeout (beyond Kafka), if it has one. */
  def idleTimeoutMs: Option[Long] = None

  /** How errors name the operator's input, its key argument and its key and timestamp columns' parameters. */
  def inputName: String = "the input"
  def keyArgument: String = "key"
  def keyParameter: String = "key"
  def timestampParameter: String = "timestamp"
}

private[sparksuppress] object ChainStep {

  /** True for this library's operators, false for the stateless steps between them. */
  def isOperator(s: ChainStep): Boolean = s match {
    case _: FilterStep | _: ProjectStep => false
    case _ => true
  }

  /** True for an operator that lets late records out (beyond Kafka, `late="emit"`). */
  def emitsLate(s: ChainStep): Boolean = s match {
    case SuppressStep(r) => r.emitLate
    case WindowedAggregateStep(r) => r.emitLate
    case _ => false
  }

  final case class SuppressStep(r: ChainSuppressRequest) extends ChainStep {
    def kind: String = "suppress"
    def name: String = r.name
    def key: Seq[String] = r.key
    def timestamp: String = r.timestamp
    override def explicitName: Option[String] = r.request.explicitName
    override def idleTimeoutMs: Option[Long] = r.idleTimeoutMs
  }
  final case class WindowedAggregateStep(r: WindowAggregateRequest) extends ChainStep {
    def kind: String = "aggregate_windowed"
    def name: String = r.name
    def key: Seq[String] = r.key
    def timestamp: String = r.timestamp
    override def explicitName: Option[String] = r.explicitName
    override def idleTimeoutMs: Option[Long] = r.idleTimeoutMs
  }
  final case class KeyAggregateStep(r: KeyAggregateRequest) extends ChainStep {
    def kind: String = "aggregate"
    def name: String = r.name
    def key: Seq[String] = r.key
    def timestamp: String = r.timestamp
    override def explicitName: Option[String] = r.explicitName
  }

  /**
   * A `where`/`filter` the user applied between two of this library's operators (Kafka's KStream/KTable `filter`). It
   * keeps the key and timestamp of the operator before it.
   *
   * @param condition
   *   the analysed condition over `input`
   * @param input
   *   the output of the plan it filters: the columns the chain has at that point
   */
  final case class FilterStep(condition: Expression, input: Seq[Attribute]) extends ChainStep {
    def kind: String = "where"
    def name: String = condition.sql
    def key: Seq[String] = Nil
    def timestamp: String = null
  }

  /**
   * A `select`/`withColumn` between two of this library's operators (Kafka's `mapValues`): it must keep the key,
   * timestamp, window and deletion columns as they are.
   *
   * @param columns
   *   the analysed project list over `input`
   */
  final case class ProjectStep(columns: Seq[NamedExpression], input: Seq[Attribute]) extends ChainStep {
    def kind: String = "select"
    def name: String = columns.map(_.name).mkString(", ")
    def key: Seq[String] = Nil
    def timestamp: String = null
  }

  /** Only as a chain's first step: its input is the stream; the table comes with the join. */
  final case class JoinStep(r: StreamTableJoinRequest) extends ChainStep {
    def kind: String = "join_versioned"
    override def inputName: String = "the stream"
    override def keyArgument: String = "on"
    override def keyParameter: String = "key (on, stream side)"
    override def timestampParameter: String = "stream timestamp"
    def name: String = r.spec.name
    def key: Seq[String] = r.on
    def timestamp: String = r.streamTimestamp
    override def explicitName: Option[String] = r.explicitName
    override def idleTimeoutMs: Option[Long] = r.idleTimeoutMs
  }
}

/** A chain as the driver remembers it: the input the first step reads and the steps in order. */
private[sparksuppress] final case class ChainDescription(input: DataFrame, steps: Seq[ChainStep]) {

  /** This library's operators, without the stateless steps between them. */
  def operators: Seq[ChainStep] = steps.filter(ChainStep.isOperator)
}
