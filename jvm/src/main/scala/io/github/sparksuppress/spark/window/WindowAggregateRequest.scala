package io.github.sparksuppress.spark.window

import org.apache.spark.sql.Column

import io.github.sparksuppress.core.{EmitMode, WindowDefinition}

/**
 * One windowed aggregation as the adapter receives it from the API: the core's window rules and emit mode, the names
 * of the input's columns and the user's aggregate columns, which only the DataFrame can check.
 *
 * @param explicitName
 *   the name the user gave, if any (it guards the operator's state in the checkpoint)
 * @param emitLate
 *   records dropped for a closed window leave too, flagged in a `late` column
 * @param idleTimeoutMs
 *   stream time runs on with the wall clock after this much idle time
 */
private[sparksuppress] final case class WindowAggregateRequest(
    name: String,
    explicitName: Option[String],
    key: Seq[String],
    timestamp: String,
    definition: WindowDefinition,
    mode: EmitMode,
    aggregations: Seq[Column],
    emitLate: Boolean = false,
    idleTimeoutMs: Option[Long] = None
)
