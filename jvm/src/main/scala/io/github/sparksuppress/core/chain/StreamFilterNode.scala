package io.github.sparksuppress.core.chain

/**
 * Kafka's `KStream.filter` inside a chain: a record that fails the predicate is dropped and never reaches the next
 * node, so it moves no clock there. A null value (a tombstone) never passes. Stateless.
 *
 * @param passes the predicate on a record's value; never called for tombstones
 */
final class StreamFilterNode[K](passes: ChainRecord[K] => Boolean) extends ChainNode[K] {
  private[this] var time = Long.MinValue

  def streamTime: Long = time

  override def forwardsClock: Boolean = true

  def process(record: ChainRecord[K], out: ChainOutput[K]): Unit = {
    if (record.timestamp > time) time = record.timestamp
    if (!record.isTombstone && passes(record)) out.forward(record)
  }

  def advance(to: Long, out: ChainOutput[K]): Unit = if (to > time) time = to

  def nextDueStreamTime: Long = Long.MaxValue
}
