package io.github.sparksuppress.spark.join

import org.apache.spark.sql.DataFrame

import io.github.sparksuppress.core.StreamTableJoinSpec

/**
 * One stream-table join as the adapter receives it from the API: the core's rules, already decided and validated, and
 * the names of both sides' columns, which only the DataFrames can check.
 *
 * @param explicitName
 *   the name the user gave, if any (it guards the operator's state in the checkpoint)
 * @param table
 *   the table side's changelog, its columns, and the static versions it starts from
 * @param watermarkRelease
 *   buffered records also leave once the stream's watermark passes them (beyond Kafka; applies when the join has a
 *   grace period and the stream a watermark)
 * @param idleTimeoutMs
 *   (with the release on the watermark) a quiet shard's release time runs on with the wall clock
 */
private[sparksuppress] final case class StreamTableJoinRequest(
    spec: StreamTableJoinSpec,
    explicitName: Option[String],
    on: Seq[String],
    streamTimestamp: String,
    table: TableSide,
    watermarkRelease: Boolean = true,
    idleTimeoutMs: Option[Long] = None
)

/** The table side of a join: a streaming changelog, its event-time and tombstone columns, initial versions. */
private[sparksuppress] final case class TableSide(
    changelog: DataFrame,
    timestamp: String,
    tombstone: Option[String],
    initialVersions: Option[DataFrame]
)
