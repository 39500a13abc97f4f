package io.github.sparksuppress.core.chain

/** Where a node forwards its records: the next node (at once, depth-first, as Kafka's `forward`) or the sink. */
trait ChainOutput[K] {
  def forward(record: ChainRecord[K]): Unit
}
