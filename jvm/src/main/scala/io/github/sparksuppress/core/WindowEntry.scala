package io.github.sparksuppress.core

/**
 * One window of one key: Kafka's bounds (end exclusive for time windows, inclusive for sliding and session windows),
 * the aggregate's timestamp (the largest record timestamp in it) and the aggregation buffer. `closed` marks a sliding
 * window kept after it closed, because later records may still read its aggregate.
 */
final class WindowEntry[B](val start: Long, val end: Long, var timestamp: Long, var buffer: B) {
  var closed: Boolean = false

  override def toString: String = s"[$start,$end]@$timestamp=$buffer${if (closed) " (closed)" else ""}"
}
