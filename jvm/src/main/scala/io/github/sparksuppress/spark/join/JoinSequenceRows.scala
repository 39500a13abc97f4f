package io.github.sparksuppress.spark.join

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

/**
 * The rows a lone join's sequencing node forwards to its per-key lookup ([[JoinLookupFunction]]), one per accepted
 * table write or stream record to join, grouped by key: the encoded key (empty for Kafka's null key, which no
 * encoding of a key's values is), the order the node forwarded them in, the kind, the event time, the table time
 * stamped on it, the stream row and the table row (null for a tombstone).
 */
private[spark] object JoinSequenceRows {
  val Key = 0; val Order = 1; val Kind = 2; val Time = 3; val TableTime = 4; val Stream = 5; val Table = 6
  val TableWrite = 0
  val StreamRecord = 1
  val KeyColumn = "__spark_suppress_key"

  /** The grouping key of Kafka's null key (a left join's stream records without one). */
  val NullKey: Array[Byte] = Array.emptyByteArray

  def schema(stream: StructType, tableValues: StructType): StructType = StructType(scala.Seq(
    StructField(KeyColumn, BinaryType, nullable = false),
    StructField("__spark_suppress_order", LongType, nullable = false),
    StructField("__spark_suppress_kind", IntegerType, nullable = false),
    StructField("__spark_suppress_time", LongType, nullable = false),
    StructField("__spark_suppress_table_time", LongType, nullable = false),
    StructField("__spark_suppress_stream", stream, nullable = true),
    StructField("__spark_suppress_table", tableValues, nullable = true)
  ))

  def tableWrite(key: Array[Byte], order: Long, time: Long, tableTime: Long, value: Row): Row =
    Row(key, order, TableWrite, time, tableTime, null, value)

  def streamRecord(key: Array[Byte], order: Long, time: Long, tableTime: Long, value: Row): Row =
    Row(if (key == null) NullKey else key, order, StreamRecord, time, tableTime, value, null)
}
