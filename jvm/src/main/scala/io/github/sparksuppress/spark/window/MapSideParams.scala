package io.github.sparksuppress.spark.window

import org.apache.spark.sql.types._

import io.github.sparksuppress.core.WindowDefinition

/**
 * What the map side of a windowed aggregation ([[WindowAggregateMapSide]]) needs on every input partition; built and
 * checked on the driver.
 *
 * @param combines
 *   records are combined per key and window (time windows, final results, built-in aggregates); otherwise each
 *   travels on with its evaluated inputs
 * @param keySchema
 *   the key columns, as the input has them
 * @param inputSchema
 *   the evaluated aggregate inputs
 * @param timestampNtz
 *   the event-time column is TIMESTAMP_NTZ (it arrives in microseconds, not milliseconds)
 * @param combineCheck
 *   after this many records, an input partition whose keys are mostly distinct so far stops combining and passes its
 *   further records through
 * @param closeDelayMs
 *   the watermark delay, when windows may close at the batch's horizon ([[EarlyClose]]); None: at the watermark
 */
private[sparksuppress] final case class MapSideParams(
    definition: WindowDefinition,
    combines: Boolean,
    aggregates: Array[AggregateColumn],
    keySchema: StructType,
    inputSchema: StructType,
    timestampNtz: Boolean,
    combineCheck: Int,
    closeDelayMs: Option[Long]
)

private[sparksuppress] object MapSideParams {

  /** Records an input partition combines before it checks whether combining pays. */
  val DefaultCombineCheck = 16384

  /** Internal session setting overriding [[DefaultCombineCheck]] (tests use a small value to mix both paths). */
  val CombineCheckConf = "spark.sparksuppress.window.combineCheck"
}
