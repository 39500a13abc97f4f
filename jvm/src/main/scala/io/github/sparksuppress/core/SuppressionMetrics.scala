package io.github.sparksuppress.core

/**
 * Kafka's suppression metrics for one buffer. Buffer count and size are sampled as Kafka samples them: once when the
 * buffer is opened, after every put, and after every eviction pass that evicted something; `avg` and `max` are over
 * all samples taken (Kafka's are over a rolling time window).
 */
class SuppressionMetrics {
  var emitTotal: Long = 0L
  var countCurrent: Long = 0L
  var countMax: Long = 0L
  var countSum: Double = 0.0
  var sizeCurrent: Long = 0L
  var sizeMax: Long = 0L
  var sizeSum: Double = 0.0
  var samples: Long = 0L

  def sample(numRecords: Long, sizeBytes: Long): Unit = {
    countCurrent = numRecords
    sizeCurrent = sizeBytes
    if (numRecords > countMax) countMax = numRecords
    if (sizeBytes > sizeMax) sizeMax = sizeBytes
    countSum += numRecords
    sizeSum += sizeBytes
    samples += 1
  }

  def countAvg: Double = if (samples == 0) 0.0 else countSum / samples
  def sizeAvg: Double = if (samples == 0) 0.0 else sizeSum / samples
}
