package io.github.sparksuppress.core.chain

/**
 * One operator of a chain, with Kafka's per-node state and stream time: the largest timestamp among the records that
 * reached THIS node (records it drops before Kafka's node would look at their time do not count).
 */
trait ChainNode[K] {

  /** The node's stream time; `Long.MinValue` before any record reached it. */
  def streamTime: Long

  /** Processes one record, forwarding whatever Kafka's node forwards for it, in Kafka's order. */
  def process(record: ChainRecord[K], out: ChainOutput[K]): Unit

  /**
   * Moves stream time up to `time` without a record and forwards what becomes due (the first node of a chain follows
   * the query's watermark this way, so that quiet keys' windows close). Never moves it back.
   */
  def advance(time: Long, out: ChainOutput[K]): Unit

  /** The smallest stream time at which [[advance]] would forward or forget something; `Long.MaxValue` for never. */
  def nextDueStreamTime: Long

  /**
   * True for a stateless step (a filter or a map) that never holds records back: when it starts a chain, the clock
   * [[Chain.advance]] moves reaches the first node after it that can hold records.
   */
  def forwardsClock: Boolean = false

  /**
   * False for a node on the wall clock (a processing-time suppress): the event-time clock [[Chain.advance]] moves
   * passes it by, and the caller moves its clock with wall-clock times through [[Chain.advanceNode]].
   */
  def followsEventTime: Boolean = true

  /**
   * The time an idle clock (beyond Kafka) watches for this node: its stream time, or (a join, whose stream time is
   * what it forwarded) the time its input has reached.
   */
  def idleBase: Long = streamTime
}
