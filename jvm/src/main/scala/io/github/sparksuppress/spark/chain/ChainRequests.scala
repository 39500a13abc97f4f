package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Column

import io.github.sparksuppress.core.{EntrySizeModel, SuppressionClock, SuppressionSpec}
import io.github.sparksuppress.spark.suppress.{SuppressRequest, WindowColumnNames}

/**
 * A suppress as a chain step receives it from the API: the stand-alone operator's request, except that
 * `untilWindowCloses` may come without window columns and grace: below a windowed aggregation the chain knows both.
 *
 * @param request
 *   as for the stand-alone operator; for untilWindowCloses its time limit is `graceMs` (0 when absent), which the
 *   chain replaces by the close time of the aggregation before it, and its window is whatever the user named (the
 *   stand-alone operator keeps it for untilWindowCloses only)
 * @param untilWindowCloses
 *   buffer time = window end, tombstones dropped
 * @param graceMs
 *   the grace the user gave, if any
 */
private[sparksuppress] final case class ChainSuppressRequest(
    request: SuppressRequest,
    untilWindowCloses: Boolean,
    graceMs: Option[Long]
) {
  def name: String = request.name
  def spec: SuppressionSpec = request.spec
  def clock: SuppressionClock = request.clock
  def sizeModel: EntrySizeModel = request.sizeModel
  def key: Seq[String] = request.key
  def timestamp: String = request.timestamp
  def window: Option[WindowColumnNames] = request.window
  def tombstone: Option[String] = request.tombstone
  def spillToDisk: Boolean = request.spillToDisk
  def emitLate: Boolean = request.emitLate
  def idleTimeoutMs: Option[Long] = request.idleTimeoutMs
}

/** A non-windowed aggregation (Kafka's KTable aggregation) as the adapter receives it from the API. */
private[sparksuppress] final case class KeyAggregateRequest(
    name: String,
    explicitName: Option[String],
    key: Seq[String],
    timestamp: String,
    aggregations: Seq[Column]
)
