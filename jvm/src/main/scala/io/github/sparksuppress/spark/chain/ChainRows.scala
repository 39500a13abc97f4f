package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Column

/**
 * The row a chain's function receives, one per stream record or table update (or heartbeat): the one layout that both
 * builds the plan's select list ([[columns]]) and names the ordinals `ChainFunction` reads. Grouping adds [[Group]]
 * and the watermark anchor after these.
 */
private[chain] object ChainRows {

  /** The user's row (a struct of the input's columns; null on the table side). */
  val UserRow = 0

  /** The key's bytes (`KeyEncoding`): equal bytes, equal keys (null where the chain's state is per key). */
  val Key = 1

  /** The arrival sequence (`ArrivalSequence`). */
  val Seq = 2

  /** The key's values, as the output has them. */
  val KeyValues = 3

  /** [[StreamSide]], [[TableSide]] or [[Heartbeat]]. */
  val Side = 4

  /** A table update's value columns (null on the stream side). */
  val TableRow = 5

  /** Whether a table update deletes its key. */
  val Tombstone = 6

  /** The event time in epoch milliseconds. */
  val Time = 7

  val StreamSide = 0
  val TableSide = 1

  /** A row that only makes Spark call its shard. */
  val Heartbeat = 2

  val UserRowColumn = "__spark_suppress_row"
  val KeyColumn = "__spark_suppress_key"
  val KeyValuesColumn = "__spark_suppress_key_values"
  val SideColumn = "__spark_suppress_side"
  val TableRowColumn = "__spark_suppress_table_row"
  val TombstoneColumn = "__spark_suppress_tombstone"
  val TimeColumn = "__spark_suppress_time"

  /** What the function's state is grouped by: the key, or its shard. */
  val Group = "__spark_suppress_group"

  private val names = IndexedSeq(
    UserRowColumn,
    KeyColumn,
    "__spark_suppress_seq",
    KeyValuesColumn,
    SideColumn,
    TableRowColumn,
    TombstoneColumn,
    TimeColumn
  )

  /** The select list, each value under its column's name in the layout's order. */
  def columns(
      user: Column,
      key: Column,
      seq: Column,
      keyValues: Column,
      side: Column,
      tableRow: Column,
      tombstone: Column,
      time: Column
  ): scala.Seq[Column] =
    scala.Seq(user, key, seq, keyValues, side, tableRow, tombstone, time).zip(names).map { case (c, n) => c.as(n) }
}
