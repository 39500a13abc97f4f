package io.github.sparksuppress.spark.window

import org.apache.spark.sql.types._

/**
 * The rows between the map side and the state operator: the key columns (all null for partition summaries, which puts
 * them in one group of their own: records without a key never travel), then the row's arrival sequence and kind,
 * which tells the state operator what each row is; the other columns depend on the kind:
 *
 *   - [[ShuffleRows.Record]]: `ts` and the aggregate inputs (without pre-combining, or after an input partition
 *     stopped combining);
 *   - [[ShuffleRows.Partial]]: `ts` = largest record timestamp, `start` = window start, `n` = records, `blob` = the
 *     partial buffer; the first partial of a key in an input partition also carries the key's largest timestamp there
 *     (`keyMax`, else Long.MinValue) and its records dropped there (`keyDropped`);
 *   - [[ShuffleRows.KeySummary]]: `keyMax` and `keyDropped` alone, for a key all of whose records in the partition
 *     were dropped there;
 *   - [[ShuffleRows.PartitionSummary]]: per input partition: `blob` = lateness sketch and null-key and invalid-time
 *     drops.
 *
 * Every row also carries `horizon`: the largest event time its input partition had shown when the row left it (the
 * partition's largest for rows that leave once it is read), which lets the state operator close windows in this
 * micro-batch rather than the next ([[EarlyClose]]).
 */
private[sparksuppress] class ShuffleRows(val keys: Int) extends Serializable {
  val Arrival: Int = keys
  val Kind: Int = keys + 1
  val Ts: Int = keys + 2
  val Start: Int = keys + 3
  val N: Int = keys + 4
  val Blob: Int = keys + 5
  val KeyMax: Int = keys + 6
  val KeyDropped: Int = keys + 7
  val Horizon: Int = keys + 8
  val Inputs: Int = keys + 9
}

private[sparksuppress] object ShuffleRows {
  val Record = 0
  val Partial = 1
  val KeySummary = 2
  val PartitionSummary = 3
  val SlicePartial = 4 // a Partial of one slice of hopping windows (TimeWindowPartials)

  def schema(keySchema: StructType, inputSchema: StructType): StructType = StructType(
    keySchema.fields.map(_.copy(nullable = true)).toSeq ++ Seq(
      StructField("__spark_suppress_seq", LongType, nullable = false),
      StructField("__spark_suppress_kind", IntegerType, nullable = false),
      StructField("__spark_suppress_ts", LongType, nullable = false),
      StructField("__spark_suppress_start", LongType, nullable = false),
      StructField("__spark_suppress_n", LongType, nullable = false),
      StructField("__spark_suppress_blob", BinaryType, nullable = true),
      StructField("__spark_suppress_key_max", LongType, nullable = false),
      StructField("__spark_suppress_key_dropped", LongType, nullable = false),
      StructField("__spark_suppress_horizon", LongType, nullable = false)
    ) ++
      inputSchema.fields.map(f => f.copy(name = "__spark_suppress_" + f.name, nullable = true))
  )
}
