package io.github.sparksuppress.core.chain

import io.github.sparksuppress.compat.tabulate

/**
 * Several operators on the same key run as one, as Kafka runs a sub-topology within a task: each node keeps its own
 * state and stream time, and whatever a node forwards is processed by the next node at once, before the forwarding
 * node goes on (depth-first, Kafka's `forward`). The last node forwards to the caller's output.
 *
 * Only the first node sees the input; [[advance]] moves the first node's stream time (the query's watermark in Spark)
 * and lets what becomes due flow down. Downstream nodes' clocks move only with what reaches them. Late records a node
 * emits (beyond Kafka) go straight to the caller's output.
 *
 * @param observer
 *   sees every record a node forwards, as (node index, record); for debugging and tests
 */
final class Chain[K](val nodes: IndexedSeq[ChainNode[K]], observer: (Int, ChainRecord[K]) => Unit = null) {
  require(nodes.nonEmpty, "a chain needs at least one node")

  private[this] var sink: ChainOutput[K] = _

  /** What node i forwards goes to node i + 1, or to the sink for the last node. */
  private[this] val links: IndexedSeq[ChainOutput[K]] = tabulate(nodes.length)(new Link(_))

  private final class Link(i: Int) extends ChainOutput[K] {
    def forward(record: ChainRecord[K]): Unit = {
      if (observer != null) observer(i, record)
      if (i + 1 < nodes.length) nodes(i + 1).process(record, links(i + 1)) else sink.forward(record)
    }
    override def late(record: ChainRecord[K]): Unit = sink.late(record)
  }

  /** Feeds one input record to the first node. */
  def process(record: ChainRecord[K], out: ChainOutput[K]): Unit = {
    sink = out
    nodes(0).process(record, links(0))
  }

  /** Feeds one table update to the first node, which must be a stream-table join. */
  def table(record: ChainRecord[K], out: ChainOutput[K]): Unit = {
    sink = out
    nodes(0) match {
      case j: JoinNode[K] => j.table(record, links(0))
      case other => throw new IllegalStateException(s"table updates need a join as the first node, not $other")
    }
  }

  /**
   * The first node that can hold records: stateless steps at the head hold nothing back, so the clock the input moves
   * ([[advance]]) is this node's.
   */
  val clockNode: Int = {
    val i = nodes.indexWhere(!_.forwardsClock)
    if (i < 0) nodes.length - 1 else i
  }

  /** Moves the first node's stream time to `time` (never back) and lets what becomes due flow down the chain. */
  def advance(time: Long, out: ChainOutput[K]): Unit = {
    sink = out
    var i = 0
    while (i <= clockNode) {
      if (nodes(i).followsEventTime) nodes(i).advance(time, links(i))
      i += 1
    }
  }

  /**
   * Moves node `i`'s own clock to `time` (never back) and lets what becomes due flow down from it: beyond Kafka, for
   * a node whose clock is not its input's (an idle clock's stream time, a wall-clock suppress's wall time).
   */
  def advanceNode(i: Int, time: Long, out: ChainOutput[K]): Unit = {
    sink = out
    nodes(i).advance(time, links(i))
  }

  /** The first holding node's next due stream time: the only clock that moves without records. */
  def nextDueStreamTime: Long = nodes(clockNode).nextDueStreamTime
}
