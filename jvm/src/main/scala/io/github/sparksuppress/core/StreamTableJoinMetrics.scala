package io.github.sparksuppress.core

/**
 * What one shard of a stream-table join counts. Kafka counts every kind of drop in its task-level `dropped-records`;
 * the separate counters say which rule dropped a record. The grace buffer is sampled after every put and after every
 * release pass that released something, as Kafka samples its suppression buffers.
 */
class StreamTableJoinMetrics {

  /** Stream records dropped for a null key (inner join) or a null value. */
  var droppedNullKeyOrValue: Long = 0L

  /** Table writes refused because they are older than the table's history (KIP-889). */
  var expiredTableWrites: Long = 0L

  /** Table writes dropped for a null key (Kafka's table source drops them). */
  var droppedNullTableKey: Long = 0L

  /** Stream records that arrived after their grace period and were joined at once. */
  var lateJoined: Long = 0L

  def droppedTotal: Long = droppedNullKeyOrValue + expiredTableWrites + droppedNullTableKey

  def sampleBuffer(numRecords: Long, sizeBytes: Long): Unit = ()
}
