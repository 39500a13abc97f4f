package io.github.sparksuppress.core

/**
 * A time-ordered key -> record buffer: one entry per key, ordered by `(bufferTime, key)`.
 *
 * Each entry is at once a node of a chained hash table (lookup by key) and a slot of an indexed binary min-heap
 * (the oldest entry at the root, its heap position stored in the entry). Insert, re-time and evict are therefore
 * O(log n), an update that keeps the buffer time is O(1), and the entry is the only object a new key allocates.
 *
 * Sizes are supplied by the caller with each put, so the size model stays outside this class.
 * Not thread-safe: one buffer belongs to one task.
 */
final class SuppressionBuffer[K, V](val rule: BufferTimeRule)(implicit keys: KeyOps[K]) {
  import SuppressionBuffer.Entry

  private[this] var table: Array[Entry[K, V]] = new Array[Entry[K, V]](16)
  private[this] var heap: Array[Entry[K, V]] = new Array[Entry[K, V]](16)
  private[this] var count = 0
  private[this] var bytes = 0L

  /** Number of buffered keys. */
  def numRecords: Int = count

  /** Sum of the sizes given with the current entries. */
  def sizeBytes: Long = bytes

  def isEmpty: Boolean = count == 0
  def nonEmpty: Boolean = count != 0

  /** The smallest buffer time, or `Long.MaxValue` when empty. */
  def minBufferTime: Long = if (count == 0) Long.MaxValue else heap(0).bufferTime

  /** The entry that would be evicted next, or null when empty. */
  def oldest: BufferedRecord[K, V] = if (count == 0) null else heap(0)

  def get(key: K): Option[BufferedRecord[K, V]] = Option(find(key))

  def contains(key: K): Boolean = find(key) != null

  /**
   * Inserts `key` or updates its entry. An update replaces value, timestamp and size; its buffer time follows
   * [[rule]]: kept under [[BufferTimeRule.First]], replaced under [[BufferTimeRule.Latest]].
   */
  def put(key: K, value: V, timestamp: Long, bufferTime: Long, size: Long): Unit = {
    require(size >= 0, s"size must be >= 0, got $size")
    val h = spread(keys.hash(key))
    var e = table(h & (table.length - 1))
    while (e != null && !(e.hash == h && keys.same(e.key, key))) e = e.next
    if (e != null) {
      e.value = value
      e.timestamp = timestamp
      bytes += size - e.sizeBytes
      e.sizeBytes = size
      if (rule == BufferTimeRule.Latest && bufferTime != e.bufferTime) {
        val earlier = bufferTime < e.bufferTime
        e.bufferTime = bufferTime
        if (earlier) siftUp(e.heapIndex) else siftDown(e.heapIndex)
      }
    } else {
      e = new Entry[K, V](key, h)
      e.value = value
      e.timestamp = timestamp
      e.bufferTime = bufferTime
      e.sizeBytes = size
      if (count + 1 > (table.length >> 1) + (table.length >> 2)) growTable()
      val slot = h & (table.length - 1)
      e.next = table(slot)
      table(slot) = e
      if (count == heap.length) heap = java.util.Arrays.copyOf(heap, heap.length * 2)
      heap(count) = e
      e.heapIndex = count
      count += 1
      bytes += size
      siftUp(e.heapIndex)
    }
  }

  /** Removes and returns the oldest entry; throws when empty. */
  def evictOldest(): BufferedRecord[K, V] = {
    if (count == 0) throw new NoSuchElementException("evictOldest on an empty suppression buffer")
    val e = heap(0)
    removeEntry(e)
    e
  }

  /** Evicts oldest-first while `condition` holds for the oldest entry; returns how many were evicted. */
  def evictWhile(condition: BufferedRecord[K, V] => Boolean)(emit: BufferedRecord[K, V] => Unit): Int = {
    var n = 0
    while (count > 0 && condition(heap(0))) {
      emit(evictOldest())
      n += 1
    }
    n
  }

  /** Removes `key`'s entry if present and returns it. */
  def remove(key: K): Option[BufferedRecord[K, V]] = {
    val e = find(key)
    if (e != null) removeEntry(e)
    Option(e)
  }

  /** Visits every entry in no particular order (use [[evictOldest]] for time order). */
  def foreach(f: BufferedRecord[K, V] => Unit): Unit = {
    var i = 0
    while (i < count) { f(heap(i)); i += 1 }
  }

  def clear(): Unit = {
    java.util.Arrays.fill(table.asInstanceOf[Array[AnyRef]], null)
    java.util.Arrays.fill(heap.asInstanceOf[Array[AnyRef]], 0, count, null)
    count = 0
    bytes = 0L
  }

  private[this] def find(key: K): Entry[K, V] = {
    val h = spread(keys.hash(key))
    var e = table(h & (table.length - 1))
    while (e != null && !(e.hash == h && keys.same(e.key, key))) e = e.next
    e
  }

  private[this] def removeEntry(e: Entry[K, V]): Unit = {
    val slot = e.hash & (table.length - 1)
    var prev: Entry[K, V] = null
    var cur = table(slot)
    while (cur ne e) { prev = cur; cur = cur.next }
    if (prev == null) table(slot) = e.next else prev.next = e.next
    e.next = null

    val i = e.heapIndex
    count -= 1
    bytes -= e.sizeBytes
    if (i != count) {
      val last = heap(count)
      heap(i) = last
      last.heapIndex = i
      heap(count) = null
      if (less(last, e)) siftUp(i) else siftDown(i)
    } else {
      heap(count) = null
    }
    e.heapIndex = -1
  }

  private[this] def less(a: Entry[K, V], b: Entry[K, V]): Boolean =
    a.bufferTime < b.bufferTime || (a.bufferTime == b.bufferTime && keys.compare(a.key, b.key) < 0)

  private[this] def siftUp(start: Int): Unit = {
    val e = heap(start)
    var i = start
    while (i > 0) {
      val parent = (i - 1) >>> 1
      val p = heap(parent)
      if (!less(e, p)) { heap(i) = e; e.heapIndex = i; return }
      heap(i) = p
      p.heapIndex = i
      i = parent
    }
    heap(i) = e
    e.heapIndex = i
  }

  private[this] def siftDown(start: Int): Unit = {
    val e = heap(start)
    var i = start
    val half = count >>> 1
    while (i < half) {
      var child = 2 * i + 1
      val right = child + 1
      if (right < count && less(heap(right), heap(child))) child = right
      val c = heap(child)
      if (!less(c, e)) { heap(i) = e; e.heapIndex = i; return }
      heap(i) = c
      c.heapIndex = i
      i = child
    }
    heap(i) = e
    e.heapIndex = i
  }

  private[this] def growTable(): Unit = {
    val old = table
    val grown = new Array[Entry[K, V]](old.length * 2)
    var i = 0
    while (i < old.length) {
      var e = old(i)
      while (e != null) {
        val next = e.next
        val slot = e.hash & (grown.length - 1)
        e.next = grown(slot)
        grown(slot) = e
        e = next
      }
      i += 1
    }
    table = grown
  }

  private[this] def spread(h: Int): Int = h ^ (h >>> 16)
}

object SuppressionBuffer {
  private[core] final class Entry[K, V](val key: K, val hash: Int) extends BufferedRecord[K, V] {
    var value: V = _
    var timestamp: Long = 0L
    var bufferTime: Long = 0L
    var sizeBytes: Long = 0L
    var heapIndex: Int = -1
    var next: Entry[K, V] = _
  }
}
