package io.github.sparksuppress.core

/** Receives a [[StreamTableSequencer]]'s decisions, in the order Kafka's join processor would act on them. */
trait JoinSequence[K, S, T] {

  /** Apply an accepted table write (a null value is a tombstone); `tableTime` counts it already. */
  def tableWrite(key: K, timestamp: Long, value: T, tableTime: Long): Unit

  /** Join a stream record now, as of its own timestamp, with the table as it stands at `tableTime`. */
  def streamRecord(key: K, timestamp: Long, value: S, tableTime: Long): Unit
}

/**
 * The part of Kafka's stream-table join that needs every key of a task (a shard here): the table's observed stream
 * time, which decides which writes are accepted and which lookups are expired, and the grace buffer with its own
 * stream time. Records go in in processing order; what comes out, in the same order, is the table writes to apply and
 * the stream records to join, each stamped with the table time of that moment. Applying them in that order per key
 * (see [[TableEntry]]) gives exactly Kafka's results, so the per-key table state can live elsewhere.
 *
 * For a non-versioned table every write is accepted and the table time stays [[TableStreamTime.None]].
 */
final class StreamTableSequencer[K, S, T](
    val spec: StreamTableJoinSpec,
    val metrics: StreamTableJoinMetrics = new StreamTableJoinMetrics
)(implicit keys: Ordering[K]) {

  val tableTime: Option[TableStreamTime] = spec.historyRetentionMs.map(new TableStreamTime(_))
  val buffer: Option[GraceBuffer[K, S]] = spec.graceMs.map(new GraceBuffer[K, S](_))

  /** The largest timestamp of every stream record this shard has processed, dropped ones included. */
  var streamSeen: Long = TableStreamTime.None

  private def now: Long = tableTime.fold(TableStreamTime.None)(_.time)

  def table(key: K, keyIsNull: Boolean, timestamp: Long, value: T, out: JoinSequence[K, S, T]): Unit =
    if (keyIsNull) metrics.droppedNullTableKey += 1
    else if (tableTime.forall(_.accept(timestamp))) out.tableWrite(key, timestamp, value, now)
    else metrics.expiredTableWrites += 1

  def stream(
      key: K,
      keyIsNull: Boolean,
      valueIsNull: Boolean,
      timestamp: Long,
      value: S,
      size: Long,
      out: JoinSequence[K, S, T]
  ): Unit = {
    if (timestamp > streamSeen) streamSeen = timestamp
    if (spec.joinType.drops(keyIsNull, valueIsNull)) metrics.droppedNullKeyOrValue += 1
    else buffer match {
      case None => out.streamRecord(key, timestamp, value, now)
      case Some(b) if b.isLate(timestamp) =>
        metrics.lateJoined += 1
        out.streamRecord(key, timestamp, value, now)
      case Some(b) =>
        b.put(key, timestamp, value, size)
        sample(b)
        if (b.releaseDue(e => out.streamRecord(e.key, e.timestamp, e.value, now)) > 0) sample(b)
    }
  }

  /**
   * Joins every buffered record whose grace period has passed at `time`, a clock beyond Kafka's (the query's
   * watermark over all shards), but only once `time` is later than every stream record this shard has seen: then
   * other shards moved it, and this one would wait for a record that may never come. Up to that point Kafka's own
   * clock decides (a dropped record moves a watermark but not Kafka's stream time), so Kafka's timing holds wherever
   * Kafka emits.
   */
  def release(time: Long, out: JoinSequence[K, S, T]): Unit = if (time > streamSeen) buffer.foreach { b =>
    if (b.releaseDueAt(time, e => out.streamRecord(e.key, e.timestamp, e.value, now)) > 0) sample(b)
  }

  private def sample(b: GraceBuffer[K, S]): Unit = metrics.sampleBuffer(b.numRecords.toLong, b.sizeBytes)
}
