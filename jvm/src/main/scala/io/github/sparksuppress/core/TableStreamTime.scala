package io.github.sparksuppress.core

/**
 * A versioned table's observed stream time (KIP-889): the largest timestamp among the writes it accepted, across all
 * keys of the table (a Kafka task; a shard here). A write older than `observed - historyRetention` is refused, so no
 * key's history can change below that boundary; lookups below it are "expired" (see [[VersionedHistory.get]]).
 */
final class TableStreamTime(val historyRetentionMs: Long) {
  require(historyRetentionMs >= 0, s"historyRetentionMs must be >= 0, got $historyRetentionMs")

  private[this] var observed = TableStreamTime.None

  /** The largest accepted write timestamp, or [[TableStreamTime.None]] before the first. */
  def time: Long = observed

  /** Accepts a write at `timestamp` (advancing the time) unless it is older than the history boundary. */
  def accept(timestamp: Long): Boolean =
    if (timestamp < TimeMath.minus(observed, historyRetentionMs)) false
    else {
      if (timestamp > observed) observed = timestamp
      true
    }

  /** Restores a stored time (it only ever moves forward). */
  def advanceTo(time: Long): Unit = if (time > observed) observed = time
}

object TableStreamTime {

  /** No write seen yet. Kafka starts at -1; the smallest long keeps the rules right for negative timestamps too. */
  val None: Long = Long.MinValue
}
