package io.github.sparksuppress.core.chain

/** Where a node forwards its records: the next node (at once, depth-first, as Kafka's `forward`) or the sink. */
trait ChainOutput[K] {
  def forward(record: ChainRecord[K]): Unit

  /**
   * A record the node dropped as late and, beyond Kafka (`late="emit"`), lets the user see: Kafka's downstream nodes
   * never see it, so it passes them by and leaves the chain as it is. Only nodes told to emit late records call it.
   */
  def late(record: ChainRecord[K]): Unit =
    throw new IllegalStateException(s"a late record reached an output that does not take late records: $record")
}
