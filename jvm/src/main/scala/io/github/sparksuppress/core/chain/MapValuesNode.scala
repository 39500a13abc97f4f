package io.github.sparksuppress.core.chain

/**
 * Kafka's `mapValues` (on a KStream or a KTable) inside a chain: every record leaves with a new value and the same
 * key, window, timestamp and tombstone flag. Stateless.
 *
 * @param map
 *   the new value; called for tombstones too, so that what the engine renders keeps its key columns
 */
final class MapValuesNode[K](map: ChainRecord[K] => AnyRef) extends ForwardingNode[K] {
  protected def receive(record: ChainRecord[K], out: ChainOutput[K]): Unit =
    out.forward(record.copy(value = map(record)))
}
