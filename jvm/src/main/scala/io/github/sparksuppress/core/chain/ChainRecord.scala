package io.github.sparksuppress.core.chain

/**
 * A record travelling between the nodes of a chain, as Kafka forwards it: a key (null only where Kafka allows one,
 * e.g. a left join's null-key stream record), the window when the key is windowed (null otherwise), a value and its
 * timestamp. A tombstone (Kafka's null value) has a null value or the `tombstone` flag; a flagged one may still carry
 * a value for the engine to render (its key columns, a retracted session's last aggregate). Values must not change
 * after they are forwarded: a downstream suppress may hold them for a long time.
 */
final case class ChainRecord[K](
    key: K,
    window: WindowBounds,
    value: AnyRef,
    timestamp: Long,
    tombstone: Boolean = false
) {
  def isTombstone: Boolean = tombstone || value == null
}
