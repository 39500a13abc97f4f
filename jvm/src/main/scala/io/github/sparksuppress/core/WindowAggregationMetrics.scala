package io.github.sparksuppress.core

/**
 * What one key's aggregation did during a call, for Kafka's metrics: records dropped because their window was
 * closed (`dropped-records-total`, counted once per record and closed window, as Kafka does), and final results
 * emitted (`window-aggregate-final-emit-total`).
 */
final class WindowAggregationMetrics {
  var dropped: Long = 0L
  var emittedFinal: Long = 0L
}
