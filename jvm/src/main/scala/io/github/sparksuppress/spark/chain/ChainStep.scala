package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.DataFrame

import io.github.sparksuppress.spark.join.StreamTableJoinRequest
import io.github.sparksuppress.spark.window.WindowAggregateRequest

/** One operator of this library as a chain step, as the API hands it over. */
private[sparksuppress] sealed trait ChainStep {
  /** How errors name the operator (Python and Scala spellings alike). */
  def kind: String
  def name: String
  def key: Seq[String]
  def timestamp: String
}

private[sparksuppress] object ChainStep {
  final case class SuppressStep(r: ChainSuppressRequest) extends ChainStep {
    def kind: String = "suppress"
    def name: String = r.name
    def key: Seq[String] = r.key
    def timestamp: String = r.timestamp
  }
  final case class WindowedAggregateStep(r: WindowAggregateRequest) extends ChainStep {
    def kind: String = "aggregate_windowed"
    def name: String = r.name
    def key: Seq[String] = r.key
    def timestamp: String = r.timestamp
  }
  final case class KeyAggregateStep(r: KeyAggregateRequest) extends ChainStep {
    def kind: String = "aggregate"
    def name: String = r.name
    def key: Seq[String] = r.key
    def timestamp: String = r.timestamp
  }
  /** Only as a chain's first step: its input is the stream; the table comes with the join. */
  final case class JoinStep(r: StreamTableJoinRequest) extends ChainStep {
    def kind: String = "join_versioned"
    def name: String = r.spec.name
    def key: Seq[String] = r.on
    def timestamp: String = r.streamTimestamp
  }
}

/** A chain as the driver remembers it: the input the first step reads and the steps in order. */
private[sparksuppress] final case class ChainDescription(input: DataFrame, steps: Seq[ChainStep])
