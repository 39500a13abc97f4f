package io.github.sparksuppress.core.chain

/**
 * A step that holds no record back (a filter, a map): whatever it forwards for a record, it forwards at once, so it
 * has nothing due and its stream time only records what reached it.
 */
abstract class ForwardingNode[K] extends ChainNode[K] {
  private[this] var time = Long.MinValue

  final def streamTime: Long = time

  /** Restores the node's clock (state read back). */
  final def restore(streamTime: Long): Unit = time = streamTime

  final override def forwardsClock: Boolean = true

  final def process(record: ChainRecord[K], out: ChainOutput[K]): Unit = {
    if (record.timestamp > time) time = record.timestamp
    receive(record, out)
  }

  /** What the step forwards for `record`. */
  protected def receive(record: ChainRecord[K], out: ChainOutput[K]): Unit

  final def advance(to: Long, out: ChainOutput[K]): Unit = if (to > time) time = to

  final def nextDueStreamTime: Long = Long.MaxValue
}
