package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Row

import io.github.sparksuppress.core.KeyOps

/**
 * A chain's key: its encoded bytes (equality, hashing and Kafka's order, see
 * [[io.github.sparksuppress.spark.KeyEncoding]]) and the key columns' values, which every node's output rows repeat.
 */
final class ChainKey(val bytes: Array[Byte], val values: Row) {
  // Keys are equal when their bytes are (a join's table map is keyed by them).
  override def equals(other: Any): Boolean = other match {
    case k: ChainKey => java.util.Arrays.equals(bytes, k.bytes)
    case _ => false
  }
  override def hashCode(): Int = java.util.Arrays.hashCode(bytes)
  override def toString: String = String.valueOf(values)
}

object ChainKey {

  /** The key of these values, or null (Kafka's null key, which every node but a left join drops) if any is null. */
  def orNull(bytes: Array[Byte], values: Row): ChainKey =
    if ((0 until values.length).exists(values.isNullAt)) null else new ChainKey(bytes, values)

  implicit val keyOps: KeyOps[ChainKey] = new KeyOps[ChainKey] {
    def hash(k: ChainKey): Int = java.util.Arrays.hashCode(k.bytes)
    def same(a: ChainKey, b: ChainKey): Boolean = java.util.Arrays.equals(a.bytes, b.bytes)
    def compare(a: ChainKey, b: ChainKey): Int = java.util.Arrays.compareUnsigned(a.bytes, b.bytes)
  }
}
