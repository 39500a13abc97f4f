package io.github.sparksuppress.api

import org.apache.spark.sql.DataFrame

import io.github.sparksuppress.spark.StreamTableJoinPlan
import io.github.sparksuppress.spark.chain.{ChainPlan, ChainStep}

/**
 * Kafka's stream-table join (with KIP-923's grace period) as a function on the stream DataFrame:
 * `orders.transform(StreamTableJoin(Seq("customer"), "order_ts", customers, Joined.left().withGracePeriod(g)))`.
 *
 * The output has the stream's columns followed by the table's value columns (all its columns but the key,
 * event-time and tombstone ones) as of each stream record's timestamp. A table value column whose name is also a
 * stream column is an error: rename one side first.
 *
 * @param on              key column(s), with the same names and types on both sides
 * @param streamTimestamp the stream's event-time column
 * @param table           the table side
 * @param joined          join type, grace period and name
 */
final case class StreamTableJoin(on: Seq[String], streamTimestamp: String, table: ChangelogTable, joined: Joined)
    extends (DataFrame => DataFrame) {

  /** Followed by another operator of this library, the join becomes the first step of one fused chain. */
  override def apply(stream: DataFrame): DataFrame =
    ChainPlan.apply(stream, ChainStep.JoinStep(this))(StreamTableJoinPlan.build(_, this))
}

object StreamTableJoin {
  def apply(on: String, streamTimestamp: String, table: ChangelogTable, joined: Joined): StreamTableJoin =
    StreamTableJoin(Seq(on), streamTimestamp, table, joined)
}
