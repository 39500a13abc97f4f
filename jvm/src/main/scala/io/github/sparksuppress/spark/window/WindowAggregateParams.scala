package io.github.sparksuppress.spark.window

import org.apache.spark.sql.types._

import io.github.sparksuppress.core.{EmitMode, SessionWindowDefinition, SlidingWindowDefinition, WindowDefinition}
import io.github.sparksuppress.spark.common._

/**
 * Everything the executors need to run one windowed aggregation; built and checked on the driver.
 *
 * @param keySchema
 *   the key columns (watermark markers removed), as the output has them
 * @param groupSchema
 *   the key columns as they travel and group: strings of the default collation as their UTF-8 bytes (grouping alike,
 *   but no decoding or string hashing per record)
 * @param inputSchema
 *   the evaluated aggregate inputs
 * @param precombine
 *   records are combined per key and window before the shuffle (time windows, final results, built-in aggregates
 *   only)
 * @param timestampNtz
 *   the event-time column is TIMESTAMP_NTZ (the output times are then too)
 * @param emitLate
 *   records dropped for a closed window leave as rows too; the output has a `late` column
 * @param fingerprint
 *   what stored state depends on (windows, aggregates, key types); checked on restore
 * @param idleTimeoutMs
 *   each key's stream time runs on with the wall clock once it stood still this long
 *   ([[io.github.sparksuppress.core.IdleClock]]); the operator then has processing-time timeouts
 * @param combineCheck
 *   with `precombine`: after this many records, an input partition whose keys are mostly distinct so far stops
 *   combining and passes its further records through (see [[WindowAggregateMapSide]])
 */
private[sparksuppress] final case class WindowAggregateParams(
    operatorName: String,
    explicitName: Option[String],
    definition: WindowDefinition,
    mode: EmitMode,
    aggregates: Array[AggregateColumn],
    keySchema: StructType,
    groupSchema: StructType,
    inputSchema: StructType,
    precombine: Boolean,
    timestampNtz: Boolean,
    fingerprint: Long,
    emitLate: Boolean = false,
    idleTimeoutMs: Option[Long] = None,
    combineCheck: Int = WindowAggregateParams.DefaultCombineCheck
) {

  /** Sessions emitting updates also retract the sessions a merge removes. */
  def retractions: Boolean = mode == EmitMode.OnWindowUpdate && definition.isInstanceOf[SessionWindowDefinition]

  /** Key column `i` of a grouping key, as the output has it. */
  def outputKey(group: org.apache.spark.sql.Row, i: Int): Any =
    if (group.isNullAt(i) || groupSchema(i).dataType == keySchema(i).dataType) group.get(i)
    else new String(group.getAs[Array[Byte]](i), java.nio.charset.StandardCharsets.UTF_8)

  /**
   * The output `window.end`: exclusive, as Spark's `window()` and `session_window()` give it. Time windows keep
   * Kafka's exclusive end; a sliding window's inclusive end becomes end + 1 ms; a session ends `gap` after its last
   * record, as `session_window` has it (Kafka's inclusive session end is the result's timestamp).
   */
  def outputEnd(end: Long): Long = definition match {
    case _: SlidingWindowDefinition => end + 1
    case s: SessionWindowDefinition => end + s.gapMs
    case _ => end
  }
}

private[sparksuppress] object WindowAggregateParams {

  /** Records an input partition combines before it checks whether combining pays. */
  val DefaultCombineCheck = 16384

  /** Internal session setting overriding [[DefaultCombineCheck]] (tests use a small value to mix both paths). */
  val CombineCheckConf = "spark.sparksuppress.window.combineCheck"
}

/**
 * The rows between the map side and the state operator: the key columns (the grouping key; all null for partition
 * summaries, which puts them in one group of their own: records without a key never travel), then the row's arrival
 * sequence and kind, which tells the state operator what each row is; the other columns depend on the kind:
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
 */
private[spark] final class ShuffleRows(val keys: Int) extends Serializable {
  val Arrival: Int = keys
  val Kind: Int = keys + 1
  val Ts: Int = keys + 2
  val Start: Int = keys + 3
  val N: Int = keys + 4
  val Blob: Int = keys + 5
  val KeyMax: Int = keys + 6
  val KeyDropped: Int = keys + 7
  val Inputs: Int = keys + 8
}

private[spark] object ShuffleRows {
  val Record = 0
  val Partial = 1
  val KeySummary = 2
  val PartitionSummary = 3
  val SlicePartial = 4 // a Partial of one slice of hopping windows (TimeWindowPartials)

  def schema(groupSchema: StructType, inputSchema: StructType): StructType = StructType(
    groupSchema.fields.map(_.copy(nullable = true)).toSeq ++ Seq(
      StructField("__spark_suppress_seq", LongType, nullable = false),
      StructField("__spark_suppress_kind", IntegerType, nullable = false),
      StructField("__spark_suppress_ts", LongType, nullable = false),
      StructField("__spark_suppress_start", LongType, nullable = false),
      StructField("__spark_suppress_n", LongType, nullable = false),
      StructField("__spark_suppress_blob", BinaryType, nullable = true),
      StructField("__spark_suppress_key_max", LongType, nullable = false),
      StructField("__spark_suppress_key_dropped", LongType, nullable = false)
    ) ++
      inputSchema.fields.map(f => f.copy(name = "__spark_suppress_" + f.name, nullable = true))
  )
}
