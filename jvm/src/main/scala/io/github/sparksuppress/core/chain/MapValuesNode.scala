package io.github.sparksuppress.core.chain

/**
 * Kafka's `mapValues` (on a KStream or a KTable) inside a chain: every record leaves with a new value and the same
 * key, window, timestamp and tombstone flag. Stateless.
 *
 * @param map the new value; called for tombstones too, so that what the engine renders keeps its key columns
 */
final class MapValuesNode[K](map: ChainRecord[K] => AnyRef) extends ChainNode[K] {
  private[this] var time = Long.MinValue

  def streamTime: Long = time

  override def forwardsClock: Boolean = true

  def process(record: ChainRecord[K], out: ChainOutput[K]): Unit = {
    if (record.timestamp > time) time = record.timestamp
    out.forward(record.copy(value = map(record)))
  }

  def advance(to: Long, out: ChainOutput[K]): Unit = if (to > time) time = to

  def nextDueStreamTime: Long = Long.MaxValue
}
