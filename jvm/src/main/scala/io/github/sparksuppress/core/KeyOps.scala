package io.github.sparksuppress.core

import java.nio.charset.StandardCharsets

/**
 * Equality, hashing and order of buffer keys. The order breaks ties between entries with the same buffer time, so it
 * decides which key a size bound evicts first; Kafka compares serialized key bytes unsigned lexicographically (a
 * shorter prefix first), and [[KeyOps.bytes]] does the same.
 */
trait KeyOps[K] extends Ordering[K] {
  def hash(key: K): Int
  def same(a: K, b: K): Boolean
}

object KeyOps {

  /** Serialized keys: content equality, unsigned lexicographic order (Kafka's `Bytes` order). */
  implicit val bytes: KeyOps[Array[Byte]] = new KeyOps[Array[Byte]] {
    def hash(key: Array[Byte]): Int = java.util.Arrays.hashCode(key)
    def same(a: Array[Byte], b: Array[Byte]): Boolean = java.util.Arrays.equals(a, b)
    def compare(a: Array[Byte], b: Array[Byte]): Int = java.util.Arrays.compareUnsigned(a, b)
  }

  /** Strings ordered as their UTF-8 bytes are (code point order), as Kafka's string serde orders them. */
  implicit val utf8String: KeyOps[String] = new KeyOps[String] {
    def hash(key: String): Int = key.hashCode
    def same(a: String, b: String): Boolean = a == b
    def compare(a: String, b: String): Int =
      java.util.Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8))
  }

  implicit val long: KeyOps[Long] = new KeyOps[Long] {
    def hash(key: Long): Int = java.lang.Long.hashCode(key)
    def same(a: Long, b: Long): Boolean = a == b
    def compare(a: Long, b: Long): Int = java.lang.Long.compare(a, b)
  }
}
