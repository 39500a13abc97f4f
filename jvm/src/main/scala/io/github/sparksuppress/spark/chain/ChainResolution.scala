package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core.WindowDefinition

/**
 * What the steps of a chain resolve to, step by step on the driver: the schema each step produces and what the next
 * step needs to know about its rows.
 *
 * @param windowed
 *   the windowed aggregation the rows come from, if any
 * @param timestamp
 *   the event-time column of the rows
 * @param table
 *   the rows are a table's updates (Kafka's KTable), not a stream's records
 * @param flag
 *   the boolean column marking deletions (tombstones), if the rows have one
 * @param windowColumns
 *   the columns holding a row's window
 * @param closedAfterMs
 *   how long after its end a window of these rows can still change (see `TableFilterNode`)
 */
private[chain] final class ChainResolution(
    var schema: StructType,
    var windowed: Option[WindowDefinition],
    var timestamp: String,
    var table: Boolean,
    var flag: Option[String],
    var windowColumns: Seq[String],
    var closedAfterMs: Option[Long]
)
