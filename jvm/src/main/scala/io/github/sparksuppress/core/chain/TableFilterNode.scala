package io.github.sparksuppress.core.chain

import io.github.sparksuppress.core.KeyOps

/**
 * Kafka's `KTable.filter` inside a chain. What it forwards for an update that fails the predicate depends on whether
 * the node after it asks for old values (a suppress does; an aggregation reading the table's `toStream()` does not):
 *
 *   - with old values, Kafka filters the old value too and skips the update when both are filtered away: a failing
 *     update leaves as a tombstone only when the key's previous value passed, otherwise not at all. This node keeps
 *     the keys (with their windows) whose latest value passed, which is exactly what the old value would tell.
 *   - without them, every failing update leaves as a tombstone.
 *
 * An update that passes always leaves unchanged. A null value (a tombstone) never passes. A KTable has no null keys:
 * a record without one is dropped.
 *
 * @param passes
 *   the predicate on a record's value; never called for tombstones
 * @param passing
 *   how an update that passes leaves (the engine may add a column to its row)
 * @param withOldValues
 *   the next stateful node is a suppress (Kafka then sends old values through this filter)
 * @param tombstone
 *   the tombstone forwarded in place of a failing update (same key, window and timestamp)
 * @param closedAfterMs
 *   below a windowed aggregation: how long after its end (in stream time) a window can no longer change, so that its
 *   entry can be forgotten; `None` keeps entries as long as the key lives
 */
final class TableFilterNode[K](
    passes: ChainRecord[K] => Boolean,
    passing: ChainRecord[K] => ChainRecord[K],
    val withOldValues: Boolean,
    tombstone: ChainRecord[K] => ChainRecord[K],
    closedAfterMs: Option[Long]
)(implicit keys: KeyOps[K])
    extends ForwardingNode[K] {

  /** The (key, window) pairs whose latest value passed; kept only with old values. */
  val passed = new java.util.TreeSet[WindowedKey[K]](WindowedKey.keyOps[K])
  var droppedNullKeys: Long = 0L

  protected def receive(record: ChainRecord[K], out: ChainOutput[K]): Unit = {
    if (record.key == null) { droppedNullKeys += 1; return }
    val ok = !record.isTombstone && passes(record)
    if (!withOldValues) out.forward(if (ok) passing(record) else tombstone(record))
    else {
      val k = WindowedKey(record.key, record.window)
      if (ok) {
        passed.add(k)
        out.forward(passing(record))
      } else if (passed.remove(k)) out.forward(tombstone(record))
    }
  }

  /**
   * Forgets windows the aggregation before this node can no longer update (their end plus `closedAfterMs` lies before
   * this node's stream time, which never passes the aggregation's): no update, so no old value, will come.
   */
  def forgetClosedWindows(): Unit = closedAfterMs.foreach { after =>
    val it = passed.iterator()
    while (it.hasNext) {
      val w = it.next().window
      if (w != null && w.end + after < streamTime) it.remove()
    }
  }
}
