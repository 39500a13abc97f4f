package io.github.sparksuppress.core

/**
 * What one key's aggregation did during a call, for Kafka's metrics: records dropped because their window was closed
 * (`dropped-records-total`, counted once per record and closed window, as Kafka does), and final results emitted
 * (`window-aggregate-final-emit-total`).
 */
final class WindowAggregationMetrics {
  var dropped: Long = 0L
  var emittedFinal: Long = 0L

  /** Kafka's record lateness (stream time before the record minus its timestamp, at least 0), where counted here. */
  var latenessRecords: Long = 0L
  var latenessTotal: Long = 0L
  var latenessMax: Long = 0L

  def lateness(streamTime: Long, timestamp: Long): Unit = if (streamTime != Long.MinValue) {
    val l = math.max(0L, streamTime - timestamp)
    latenessRecords += 1
    latenessTotal += l
    if (l > latenessMax) latenessMax = l
  }
}
