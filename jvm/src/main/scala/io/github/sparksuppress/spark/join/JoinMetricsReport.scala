package io.github.sparksuppress.spark.join

import io.github.sparksuppress.core.{GraceBuffer, StreamTableJoinMetrics}
import io.github.sparksuppress.spark.common.OperatorMetricsAccumulator

/** What one call of a stream-table join on one shard reports to its operator's metrics, alone or in a chain. */
private[sparksuppress] object JoinMetricsReport {
  def apply(
      counts: StreamTableJoinMetrics,
      buffer: Option[GraceBuffer[_, _]],
      metrics: OperatorMetricsAccumulator,
      shard: Int
  ): Unit = {
    metrics.count("dropped-null-key-or-value", counts.droppedNullKeyOrValue)
    metrics.count("expired-table-writes", counts.expiredTableWrites)
    metrics.count("dropped-null-table-key", counts.droppedNullTableKey)
    metrics.count("late-joined", counts.lateJoined)
    buffer.foreach { b =>
      metrics.gauge("grace-buffer-count", shard, b.numRecords.toLong)
      metrics.gauge("grace-buffer-bytes", shard, b.sizeBytes)
    }
  }
}

/** Forwards the core's grace-buffer samples to the operator's accumulator. */
private[sparksuppress] final class JoinMetricsSampler(acc: OperatorMetricsAccumulator) extends StreamTableJoinMetrics {
  override def sampleBuffer(numRecords: Long, sizeBytes: Long): Unit = {
    acc.sample("grace-buffer-count", numRecords.toDouble)
    acc.sample("grace-buffer-bytes", sizeBytes.toDouble)
    acc.max("grace-buffer-count", numRecords)
    acc.max("grace-buffer-bytes", sizeBytes)
  }
}
