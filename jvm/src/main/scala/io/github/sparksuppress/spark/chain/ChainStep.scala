package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.DataFrame

import io.github.sparksuppress.api.{Aggregate, AggregateWindowed, StreamTableJoin, Suppress}

/** One operator of this library as a chain step, as the user configured it. */
sealed trait ChainStep {
  /** How errors name the operator (Python and Scala spellings alike). */
  def kind: String
}

object ChainStep {
  final case class SuppressStep(s: Suppress) extends ChainStep { def kind: String = "suppress" }
  final case class WindowedAggregateStep(a: AggregateWindowed) extends ChainStep { def kind: String = "aggregate_windowed" }
  final case class KeyAggregateStep(a: Aggregate) extends ChainStep { def kind: String = "aggregate" }
  /** Only as a chain's first step: its input is the stream; the table comes with the join. */
  final case class JoinStep(j: StreamTableJoin) extends ChainStep { def kind: String = "join_versioned" }
}

/** A chain as the driver remembers it: the input the first step reads and the steps in order. */
final case class ChainDescription(input: DataFrame, steps: Seq[ChainStep])
