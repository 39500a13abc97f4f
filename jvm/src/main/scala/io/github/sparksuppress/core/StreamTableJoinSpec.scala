package io.github.sparksuppress.core

/**
 * The rules one stream-table join follows, in engine terms (milliseconds).
 *
 * @param name
 *   operator name used in errors and metrics
 * @param joinType
 *   inner or left
 * @param graceMs
 *   how long stream records wait for out-of-order table updates; None: joined at once
 * @param historyRetentionMs
 *   how far back the table keeps versions; None: a non-versioned table (latest value only)
 */
final case class StreamTableJoinSpec(
    name: String,
    joinType: JoinType,
    graceMs: Option[Long],
    historyRetentionMs: Option[Long]
) {

  require(graceMs.forall(_ >= 0), s"graceMs must be >= 0, got $graceMs")
  require(historyRetentionMs.forall(_ >= 0), s"historyRetentionMs must be >= 0, got $historyRetentionMs")
  StreamTableJoinSpec.graceViolation(graceMs, historyRetentionMs).foreach(m => throw new IllegalArgumentException(m))

  def versioned: Boolean = historyRetentionMs.isDefined
}

object StreamTableJoinSpec {

  /** Kafka's messages for the two rules that tie the grace period to the table. */
  val GraceNeedsVersionedTable = "KTable must be versioned to use a grace period in a stream table join."
  val GraceExceedsHistory = "History retention must be at least grace period."

  /** The rule tying the grace period to the table's history that these break, as Kafka words it; None if none. */
  def graceViolation(graceMs: Option[Long], historyRetentionMs: Option[Long]): Option[String] =
    (graceMs, historyRetentionMs) match {
      case (Some(_), None) => Some(GraceNeedsVersionedTable)
      case (Some(g), Some(r)) if g > r => Some(GraceExceedsHistory)
      case _ => None
    }
}
