package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Column

import io.github.sparksuppress.core.{EntrySizeModel, SuppressionClock, SuppressionSpec}
import io.github.sparksuppress.spark.suppress.WindowColumnNames

/**
 * A suppress as a chain step receives it from the API. Unlike a stand-alone suppress, `untilWindowCloses` may come
 * without window columns and grace: below a windowed aggregation the chain knows both.
 *
 * @param spec              the buffer's rules; for untilWindowCloses its time limit is `graceMs` (0 when absent),
 *                          which the chain replaces by the close time of the aggregation before it
 * @param untilWindowCloses buffer time = window end, tombstones dropped
 * @param graceMs           the grace the user gave, if any
 * @param emitLate          late updates were asked to leave flagged (not supported in a chain: refused there)
 * @param idleTimeoutMs     idle progress was asked for (not supported in a chain: refused there)
 */
private[sparksuppress] final case class ChainSuppressRequest(
    spec: SuppressionSpec,
    explicitName: Option[String],
    clock: SuppressionClock,
    sizeModel: EntrySizeModel,
    key: Seq[String],
    timestamp: String,
    window: Option[WindowColumnNames],
    tombstone: Option[String],
    spillToDisk: Boolean,
    untilWindowCloses: Boolean,
    graceMs: Option[Long],
    emitLate: Boolean = false,
    idleTimeoutMs: Option[Long] = None) {
  def name: String = spec.name
}

/** A non-windowed aggregation (Kafka's KTable aggregation) as the adapter receives it from the API. */
private[sparksuppress] final case class KeyAggregateRequest(
    name: String,
    explicitName: Option[String],
    key: Seq[String],
    timestamp: String,
    aggregations: Seq[Column])
