package io.github.sparksuppress.api

import java.time.Duration

import org.apache.spark.sql.DataFrame

/**
 * The table side of a stream-table join: a streaming changelog (key columns, an event-time column, value columns and
 * optionally a boolean tombstone column; true deletes the key) that the join materialises per key.
 *
 * A versioned table (KIP-889) keeps each key's versions for `historyRetention` behind the largest timestamp it has
 * accepted, so a stream record joins with the version valid at its own timestamp; writes older than that boundary are
 * refused. A non-versioned table keeps only the latest write of each key, whatever its timestamp.
 *
 * @param changelog
 *   the streaming DataFrame of table updates
 * @param timestamp
 *   its event-time column
 * @param historyRetention
 *   None for a non-versioned table
 * @param tombstone
 *   a boolean column marking deletions
 * @param initialVersions
 *   a static DataFrame with the same columns whose rows the table starts with
 */
final case class ChangelogTable private (
    changelog: DataFrame,
    timestamp: String,
    historyRetention: Option[Duration],
    tombstone: Option[String],
    initialVersions: Option[DataFrame]
) {

  /** A copy that is versioned with this history retention. */
  def withHistoryRetention(historyRetention: Duration): ChangelogTable = {
    Durations.millis("historyRetention", historyRetention)
    copy(historyRetention = Some(historyRetention))
  }

  /** A copy whose rows with `column` = true are deletions (tombstones). */
  def withTombstone(column: String): ChangelogTable = copy(tombstone = Some(column))

  /**
   * A copy that starts from the rows of `versions`, a static DataFrame with the changelog's columns: every row
   * becomes a version (a tombstone if marked so), as if the changelog had delivered them before its first row. Used
   * only when the query starts without a checkpoint (Spark's initial state).
   */
  def withInitialVersions(versions: DataFrame): ChangelogTable = {
    if (versions == null)
      throw new IllegalArgumentException("initialVersions must not be null; omit it for an empty table.")
    copy(initialVersions = Some(versions))
  }

  def versioned: Boolean = historyRetention.isDefined
}

object ChangelogTable {

  /** A versioned table keeping `historyRetention` of history (Kafka: a versioned key-value store). */
  def versioned(changelog: DataFrame, timestamp: String, historyRetention: Duration): ChangelogTable =
    nonVersioned(changelog, timestamp).withHistoryRetention(historyRetention)

  /** A table keeping only the latest write per key, in arrival order (Kafka: a plain key-value store). */
  def nonVersioned(changelog: DataFrame, timestamp: String): ChangelogTable =
    ChangelogTable(changelog, timestamp, None, None, None)
}
