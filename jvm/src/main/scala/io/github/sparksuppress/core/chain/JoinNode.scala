package io.github.sparksuppress.core.chain

import io.github.sparksuppress.core._

/**
 * Kafka's stream-table join node (KIP-923 grace period over a versioned table, or a plain table) as the first node of
 * a chain: the shard's [[StreamTableSequencer]] plus every key's [[TableEntry]]. Stream records come in through
 * [[process]], table updates through [[table]]; a joined record is forwarded with the stream record's timestamp and
 * key, so the next node's stream time moves with what the join released or joined at once (a late stream record
 * overtakes the buffered ones, as in Kafka).
 *
 * @param joiner
 *   the joined value from the stream value and the table value (null when the table has none)
 * @param sizeOf
 *   a stream record's size counted in the grace buffer's metrics
 * @param metrics
 *   the sequencer's counts and grace-buffer samples
 * @param deferred
 *   when set, the table lives after the node, per key (a physical choice for a lone join: a shard's state then holds
 *   only the clocks and the grace buffer): the node forwards each accepted table write and each stream record to
 *   join, in order, as `deferred` renders them, and joins nothing itself
 */
final class JoinNode[K](
    val spec: StreamTableJoinSpec,
    joiner: (AnyRef, AnyRef) => AnyRef,
    sizeOf: ChainRecord[K] => Long,
    metrics: StreamTableJoinMetrics = new StreamTableJoinMetrics,
    deferred: JoinNode.Deferred[K] = null
)(implicit keys: KeyOps[K])
    extends ChainNode[K] {

  val sequencer = new StreamTableSequencer[K, AnyRef, AnyRef](spec, metrics)(JoinNode.nullsFirst(keys))
  val tables = new java.util.HashMap[K, TableEntry[AnyRef]]()

  /** The largest timestamp the join forwarded (what the next node's stream time is built from). */
  private[this] var time = Long.MinValue

  def streamTime: Long = time

  def restore(streamTime: Long): Unit = time = streamTime

  def table(record: ChainRecord[K], out: ChainOutput[K]): Unit =
    sequencer.table(
      record.key,
      record.key == null,
      record.timestamp,
      if (record.isTombstone) null else record.value,
      new Sink(out)
    )

  def process(record: ChainRecord[K], out: ChainOutput[K]): Unit =
    sequencer.stream(
      record.key,
      record.key == null,
      record.isTombstone,
      record.timestamp,
      record.value,
      sizeOf(record),
      new Sink(out)
    )

  /**
   * Kafka's join releases buffered records only when a stream record moves the buffer's time. Beyond Kafka, a chain
   * whose join releases on the query's watermark calls this with it: records due by `to` leave once `to` is later
   * than every stream record the shard has seen ([[StreamTableSequencer.release]]), so Kafka's timing holds wherever
   * Kafka would emit.
   */
  def advance(to: Long, out: ChainOutput[K]): Unit = sequencer.release(to, new Sink(out))

  /** The records waiting in the grace buffer. */
  def buffered: Int = sequencer.buffer.fold(0)(_.numRecords)

  def nextDueStreamTime: Long = Long.MaxValue

  /** The largest stream record's timestamp the join has seen, waiting ones included. */
  override def idleBase: Long = math.max(time, sequencer.streamSeen)

  private final class Sink(out: ChainOutput[K]) extends JoinSequence[K, AnyRef, AnyRef] {
    def tableWrite(key: K, timestamp: Long, value: AnyRef, tableTime: Long): Unit =
      if (deferred != null)
        out.forward(ChainRecord(key, null, deferred.tableWrite(key, timestamp, value, tableTime), timestamp))
      else write(key, timestamp, value, tableTime)

    private def write(key: K, timestamp: Long, value: AnyRef, tableTime: Long): Unit = {
      var e = tables.get(key)
      if (e == null) { e = TableEntry[AnyRef](spec); tables.put(key, e) }
      e.write(timestamp, value, tableTime)
      if (e.isEmpty) tables.remove(key)
    }

    def streamRecord(key: K, timestamp: Long, value: AnyRef, tableTime: Long): Unit =
      if (deferred != null) {
        if (timestamp > time) time = timestamp
        out.forward(ChainRecord(key, null, deferred.streamRecord(key, timestamp, value, tableTime), timestamp))
      } else join(key, timestamp, value, tableTime)

    private def join(key: K, timestamp: Long, value: AnyRef, tableTime: Long): Unit = {
      val e = if (key == null) null else tables.get(key)
      val tableValue = if (e == null) null else e.lookup(timestamp, tableTime)
      if (tableValue != null || spec.joinType.emitsWithoutTableValue) {
        if (timestamp > time) time = timestamp
        out.forward(ChainRecord(key, null, joiner(value, tableValue), timestamp))
      }
    }
  }
}

object JoinNode {

  /**
   * Renders what a join whose table lives after it forwards: a table write (a null value deletes) or a stream record
   * to join, with the table time of that moment (the lookup after it needs it to tell expired lookups).
   */
  trait Deferred[K] {
    def tableWrite(key: K, timestamp: Long, value: AnyRef, tableTime: Long): AnyRef
    def streamRecord(key: K, timestamp: Long, value: AnyRef, tableTime: Long): AnyRef
  }

  /** A left join buffers null-key stream records too; they sort before every key. */
  def nullsFirst[K](keys: Ordering[K]): Ordering[K] = new Ordering[K] {
    def compare(a: K, b: K): Int =
      if (a == null) { if (b == null) 0 else -1 }
      else if (b == null) 1
      else keys.compare(a, b)
  }
}
