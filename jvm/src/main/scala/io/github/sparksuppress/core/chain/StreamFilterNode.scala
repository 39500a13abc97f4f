package io.github.sparksuppress.core.chain

/**
 * Kafka's `KStream.filter` inside a chain: a record that fails the predicate is dropped and never reaches the next
 * node, so it moves no clock there. A null value (a tombstone) never passes. Stateless.
 *
 * @param passes
 *   the predicate on a record's value; never called for tombstones
 */
final class StreamFilterNode[K](passes: ChainRecord[K] => Boolean) extends ForwardingNode[K] {
  protected def receive(record: ChainRecord[K], out: ChainOutput[K]): Unit =
    if (!record.isTombstone && passes(record)) out.forward(record)
}
