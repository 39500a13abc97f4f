package io.github.sparksuppress.spark.chain

/**
 * The row an aggregation forwards: the key columns, the `window` (windowed only), one column per aggregate, the
 * result's timestamp and, for sessions emitting updates, the `retraction` flag. Its ordinals, in the order
 * `ChainPlan.aggregated` declares the columns.
 */
private[chain] final class AggregateRow(keys: Int, windowed: Boolean, aggregates: Int, flagged: Boolean)
    extends Serializable {
  val Window: Int = keys
  private val firstAggregate = if (windowed) keys + 1 else keys
  def aggregate(a: Int): Int = firstAggregate + a
  val Timestamp: Int = firstAggregate + aggregates
  val Flag: Int = Timestamp + 1
  val width: Int = if (flagged) Flag + 1 else Timestamp + 1
}
