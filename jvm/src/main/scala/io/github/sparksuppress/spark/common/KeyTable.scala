package io.github.sparksuppress.spark.common

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.unsafe.Platform
import org.apache.spark.unsafe.array.ByteArrayMethods
import org.apache.spark.unsafe.types.UTF8String

/**
 * A value per distinct key: the map side's table of partials, which every record of an input partition looks up. A
 * `java.util.HashMap` of key rows reaches a value through its bucket, an entry object, the key row and the row's
 * bytes: four dependent reads, each a likely cache miss among thousands of keys (a JFR profile of benchmark 11's
 * Spark job put 15% of its CPU samples in that lookup). Here a lookup reads one slot of a flat array, which holds the
 * key's hash beside its entry, and then compares the key with bytes that all entries keep one after another in one
 * array; the value is the only object left to reach.
 *
 * A table holds keys of one kind: rows (hashed as `UnsafeRow.hashCode` hashes them) or strings (as
 * `UTF8String.hashCode`), compared byte for byte as their `equals` compares them. Entries are numbered from 0 in the
 * order they were added, and never removed. Open addressing with linear probing, at most half full.
 */
private[sparksuppress] final class KeyTable[V <: AnyRef](expectedKeys: Int) {
  require(expectedKeys > 0, s"expectedKeys must be positive, got $expectedKeys")

  // A slot is 0 when empty, else the key's hash (high 32 bits) and its entry + 1 (low 32 bits).
  private[this] var slots = new Array[Long](KeyTable.capacityFor(expectedKeys))
  private[this] var mask = slots.length - 1
  // Entry e's key is keyBytes(starts(e) until starts(e + 1)).
  private[this] var keyBytes = new Array[Byte](expectedKeys * 16)
  private[this] var starts = new Array[Int](expectedKeys + 1)
  private[this] var values = new Array[AnyRef](expectedKeys)
  private[this] var entries = 0

  def size: Int = entries

  /** The entry of `key`, or -1 when the table does not hold it. */
  def find(key: UnsafeRow): Int = find(key.getBaseObject, key.getBaseOffset, key.getSizeInBytes, key.hashCode)

  /** The entry of `key`, or -1 when the table does not hold it. */
  def find(key: UTF8String): Int = find(key.getBaseObject, key.getBaseOffset, key.numBytes, key.hashCode)

  /** Adds `key` (copied), which the table must not hold yet, with its value; returns its entry. */
  def add(key: UnsafeRow, value: V): Int =
    add(key.getBaseObject, key.getBaseOffset, key.getSizeInBytes, key.hashCode, value)

  /** Adds `key` (copied), which the table must not hold yet, with its value; returns its entry. */
  def add(key: UTF8String, value: V): Int = add(key.getBaseObject, key.getBaseOffset, key.numBytes, key.hashCode, value)

  private def find(base: AnyRef, offset: Long, length: Int, hash: Int): Int = {
    var i = KeyTable.spread(hash) & mask
    var slot = slots(i)
    while (slot != 0L) {
      if ((slot >>> 32).toInt == hash) {
        val e = slot.toInt - 1
        if (holds(e, base, offset, length)) return e
      }
      i = (i + 1) & mask
      slot = slots(i)
    }
    -1
  }

  private def add(base: AnyRef, offset: Long, length: Int, hash: Int, value: V): Int = {
    val e = entries
    if (e == values.length) {
      values = java.util.Arrays.copyOf(values, KeyTable.grown(e))
      starts = java.util.Arrays.copyOf(starts, values.length + 1)
    }
    val start = starts(e)
    if (keyBytes.length - start < length) keyBytes = java.util.Arrays.copyOf(keyBytes, KeyTable.grown(start, length))
    Platform.copyMemory(base, offset, keyBytes, Platform.BYTE_ARRAY_OFFSET + start, length)
    starts(e + 1) = start + length
    values(e) = value
    entries = e + 1
    if (entries * 2 > slots.length) rehash(slots.length * 2)
    place(hash, e)
    e
  }

  def value(entry: Int): V = values(entry).asInstanceOf[V]

  /**
   * Points `row` at the key of `entry`, in the table's own bytes: valid until the next `add`, which may move them.
   */
  def key(entry: Int, row: UnsafeRow): UnsafeRow = {
    row.pointTo(keyBytes, Platform.BYTE_ARRAY_OFFSET + starts(entry), starts(entry + 1) - starts(entry))
    row
  }

  /** The key of `entry` added as a string, in the table's own bytes: valid until the next `add`. */
  def stringKey(entry: Int): UTF8String =
    UTF8String.fromAddress(keyBytes, Platform.BYTE_ARRAY_OFFSET + starts(entry), starts(entry + 1) - starts(entry))

  private def holds(e: Int, base: AnyRef, offset: Long, length: Int): Boolean =
    starts(e + 1) - starts(e) == length &&
      ByteArrayMethods.arrayEquals(keyBytes, Platform.BYTE_ARRAY_OFFSET + starts(e), base, offset, length)

  private def place(hash: Int, e: Int): Unit = {
    var i = KeyTable.spread(hash) & mask
    while (slots(i) != 0L) i = (i + 1) & mask
    slots(i) = (hash.toLong << 32) | (e + 1).toLong
  }

  private def rehash(capacity: Int): Unit = {
    val old = slots
    slots = new Array[Long](capacity)
    mask = capacity - 1
    var i = 0
    while (i < old.length) {
      val slot = old(i)
      if (slot != 0L) place((slot >>> 32).toInt, slot.toInt - 1)
      i += 1
    }
  }
}

private[sparksuppress] object KeyTable {

  /** The largest array the JVM allocates reliably. */
  private val MaxArray = Int.MaxValue - 8

  /** Slots for `keys` keys at most half full: a power of two, at least 16. */
  private def capacityFor(keys: Int): Int = {
    val wanted = math.max(16L, keys.toLong * 2)
    if (wanted > (1 << 30)) throw new IllegalStateException(s"a key table cannot hold $keys keys")
    Integer.highestOneBit((wanted - 1).toInt) << 1
  }

  /** Murmur's low bits are mixed already; the high ones are folded in as `java.util.HashMap` does. */
  private def spread(hash: Int): Int = hash ^ (hash >>> 16)

  private def grown(length: Int): Int = grown(length, 1)

  /** A length for an array of `used` elements that must take `more`: doubled, or as much as needed. */
  private def grown(used: Int, more: Int): Int = {
    val wanted = math.max(used.toLong * 2, used.toLong + more)
    if (used.toLong + more > MaxArray) {
      throw new IllegalStateException(s"a key table cannot grow beyond $MaxArray bytes or entries")
    }
    math.min(wanted, MaxArray.toLong).toInt
  }
}
