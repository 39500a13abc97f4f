package io.github.sparksuppress.core

/**
 * How records of type `V` fold into an aggregation buffer `B`, in Kafka's terms: `initial` is the initializer, `add`
 * the aggregator (record into buffer), `merge` the session merger (`merge(agg1, agg2)`).
 *
 * Buffers may be mutable: `add` and `merge` may change and return their first argument, and must leave the second
 * untouched. `copy` gives an independent buffer, for sliding windows, whose new windows start from a copy of a
 * neighbour's aggregate. None of them needs to be a monoid: the aggregators apply them in Kafka's order.
 */
trait Aggregation[-V, B] extends Serializable {
  def initial(): B
  def add(buffer: B, value: V): B
  def merge(buffer: B, other: B): B
  def copy(buffer: B): B
}
