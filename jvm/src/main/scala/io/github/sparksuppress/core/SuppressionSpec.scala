package io.github.sparksuppress.core

/**
 * The rules one suppression follows, in engine terms (milliseconds, plain bounds).
 *
 * @param name
 *   operator name used in errors and metrics
 * @param timeLimitMs
 *   an entry leaves once `bufferTime <= streamTime - timeLimitMs`; `Long.MaxValue` never
 * @param maxRecords
 *   bound on buffered keys (exceeded when `>`); `Long.MaxValue` for none
 * @param maxBytes
 *   bound on the summed entry sizes (exceeded when `>`); `Long.MaxValue` for none
 * @param whenFull
 *   what to do when a bound is exceeded
 * @param dropTombstones
 *   final-results mode: tombstones leave the buffer without being emitted
 * @param bufferTimeRule
 *   what an update does to an entry's buffer time
 */
final case class SuppressionSpec(
    name: String,
    timeLimitMs: Long,
    maxRecords: Long = Long.MaxValue,
    maxBytes: Long = Long.MaxValue,
    whenFull: BufferFullStrategy = BufferFullStrategy.ShutDown,
    dropTombstones: Boolean = false,
    bufferTimeRule: BufferTimeRule = BufferTimeRule.First
) {

  require(timeLimitMs >= 0, s"timeLimitMs must be >= 0, got $timeLimitMs")
  require(maxRecords >= 0, s"maxRecords must be >= 0, got $maxRecords")
  require(maxBytes >= 0, s"maxBytes must be >= 0, got $maxBytes")

  def isBounded: Boolean = maxRecords != Long.MaxValue || maxBytes != Long.MaxValue
}
