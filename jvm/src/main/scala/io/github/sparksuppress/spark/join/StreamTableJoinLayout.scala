package io.github.sparksuppress.spark.join

import org.apache.spark.sql.types._
import io.github.sparksuppress.spark.common._

/**
 * The internal rows between the join's two stateful operators.
 *
 * The sequencer's input is the union of both sides, one row per stream record or table write: `side` (0 table, 1
 * stream, 2 heartbeat), the encoded key, whether the key / the stream value is null, the event time in ms, the
 * arrival sequence, the stream row (a struct of the stream's columns), the table row (a struct of the table's value
 * columns), the tombstone flag, and the shard it is grouped by.
 *
 * The sequencer's output, grouped by key for the table side: the encoded key, the sequencer's order, the kind (0
 * table write, 1 stream record to join), the event time, the table time stamped on it, the stream row and the table
 * row (null for a tombstone).
 */
private[spark] object StreamTableJoinLayout {
  val TableSide = 0
  val StreamSide = 1

  /** A row that only makes Spark call its shard ([[ShardHeartbeats]]). */
  val Heartbeat = 2

  object In {
    val Side = 0; val Key = 1; val KeyNull = 2; val ValueNull = 3; val Time = 4; val Seq = 5
    val Stream = 6; val Table = 7; val Tombstone = 8; val Shard = 9
    val ShardColumn = "__spark_suppress_shard"
    val names: Seq[String] = scala.Seq(
      "__spark_suppress_side",
      "__spark_suppress_key",
      "__spark_suppress_key_null",
      "__spark_suppress_value_null",
      "__spark_suppress_time",
      "__spark_suppress_seq",
      "__spark_suppress_stream",
      "__spark_suppress_table",
      "__spark_suppress_tombstone",
      ShardColumn
    )
  }

  /** The table's initial versions, one row per version, from which both operators' initial state is built. */
  object Initial {
    val Key = 0; val Shard = 1; val Time = 2; val Tombstone = 3; val Value = 4; val KeyNull = 5
    val names: Seq[String] = scala.Seq("key", "shard", "time", "tombstone", "value", "key_null")
    def name(field: Int): String = names(field)
  }

  object Out {
    val Key = 0; val Order = 1; val Kind = 2; val Time = 3; val TableTime = 4; val Stream = 5; val Table = 6
    val TableWrite = 0
    val StreamRecord = 1
    val KeyColumn = "__spark_suppress_key"

    def schema(stream: StructType, tableValues: StructType): StructType = StructType(scala.Seq(
      StructField(KeyColumn, BinaryType, nullable = false),
      StructField("__spark_suppress_order", LongType, nullable = false),
      StructField("__spark_suppress_kind", IntegerType, nullable = false),
      StructField("__spark_suppress_time", LongType, nullable = false),
      StructField("__spark_suppress_table_time", LongType, nullable = false),
      StructField("__spark_suppress_stream", stream, nullable = true),
      StructField("__spark_suppress_table", tableValues, nullable = true)
    ))
  }
}
