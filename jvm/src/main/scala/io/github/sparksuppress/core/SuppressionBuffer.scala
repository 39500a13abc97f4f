package io.github.sparksuppress.core

/**
 * A time-ordered key -> record buffer: one entry per key, ordered by `(bufferTime, key)`.
 *
 * Each entry is a node of a chained hash table (lookup by key) and a slot of a time index in two levels: entries with
 * the same buffer time share a bucket, and the buckets form a binary min-heap ordered by time, found by time through
 * an open-addressing table. Streams put many records into each millisecond and mostly in time order, so an eviction
 * usually takes the next entry of the first bucket without touching the time heap, and ties are broken within a small
 * bucket rather than all along one large heap (which is what made a single heap of entries slower than Kafka's tree
 * at evictions). A bucket keeps its entries unordered until one is asked for, then sorts them once if it is small and
 * hands them out in order, or turns into a min-heap by key if it is large. The time heap and the lookup table are
 * kept in primitive arrays (times, bucket ids, and each id's heap position), so sifting and probing never touch a
 * bucket object or store a reference. Insert, re-time and evict are O(log n); an update that keeps the buffer time is
 * O(1).
 *
 * Sizes are supplied by the caller with each put, so the size model stays outside this class. Not thread-safe: one
 * buffer belongs to one task.
 */
final class SuppressionBuffer[K, V](val rule: BufferTimeRule)(implicit keys: KeyOps[K]) {
  import SuppressionBuffer.{Bucket, Entry}

  private[this] var table: Array[Entry[K, V]] = new Array[Entry[K, V]](16)
  private[this] var count = 0
  private[this] var bytes = 0L

  // bucketsById(id) is the only reference to a bucket, written when it is created and cleared when it is dropped:
  // bucket objects are scattered in memory, and once a long-lived buffer is in the old generation every reference
  // store costs G1 a card-marking write barrier, which a heap sift of references would pay at each level.
  // The time heap: slot i holds the bucket with id bucketIds(i) and time bucketTimes(i); positions(id) is the slot
  // of bucket id. Ids of dropped buckets are reused (freeIds is a stack of them).
  private[this] var bucketsById: Array[Bucket[K, V]] = new Array[Bucket[K, V]](4)
  private[this] var bucketTimes: Array[Long] = new Array[Long](4)
  private[this] var bucketIds: Array[Int] = new Array[Int](4)
  private[this] var positions: Array[Int] = new Array[Int](4)
  private[this] var freeIds: Array[Int] = new Array[Int](4)
  private[this] var freeCount = 0
  private[this] var bucketCount = 0
  // The lookup by time, open addressing: slot i holds id + 1 of a bucket (0: empty) and that bucket's time.
  private[this] var byTimeIds: Array[Int] = new Array[Int](8)
  private[this] var byTimeTimes: Array[Long] = new Array[Long](8)
  private[this] var byTimeShift = 64 - 3

  /** Number of buffered keys. */
  def numRecords: Int = count

  /** Sum of the sizes given with the current entries. */
  def sizeBytes: Long = bytes

  def isEmpty: Boolean = count == 0
  def nonEmpty: Boolean = count != 0

  /** The smallest buffer time, or `Long.MaxValue` when empty. */
  def minBufferTime: Long = if (count == 0) Long.MaxValue else bucketTimes(0)

  /** The entry that would be evicted next, or null when empty. */
  def oldest: BufferedRecord[K, V] = if (count == 0) null else first(bucketsById(bucketIds(0)))

  def get(key: K): Option[BufferedRecord[K, V]] = Option(find(key))

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
        leaveBucket(e)
        e.bufferTime = bufferTime
        joinBucket(e)
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
      count += 1
      bytes += size
      joinBucket(e)
    }
  }

  /** Removes and returns the oldest entry; throws when empty. */
  def evictOldest(): BufferedRecord[K, V] = {
    if (count == 0) throw new NoSuchElementException("evictOldest on an empty suppression buffer")
    val e = first(bucketsById(bucketIds(0)))
    removeEntry(e)
    e
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
    while (i < bucketCount) {
      val b = bucketsById(bucketIds(i))
      var j = 0
      while (j < b.size) { f(b.entries(j)); j += 1 }
      i += 1
    }
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
    count -= 1
    bytes -= e.sizeBytes
    leaveBucket(e)
  }

  // Entries within a bucket.

  private[this] def joinBucket(e: Entry[K, V]): Unit = {
    val b = bucketFor(e.bufferTime)
    if (b.size == b.entries.length) b.entries = java.util.Arrays.copyOf(b.entries, b.size * 2)
    b.entries(b.size) = e
    e.bucket = b
    b.size += 1
    if (b.order == Bucket.Heap) keySiftUp(b, e, b.size - 1)
    else {
      e.slot = b.size - 1
      // Still sorted if the newcomer is the new smallest key (sorted buckets keep their smallest key last) and
      // the bucket is still small enough for removals that shift entries.
      if (
        b.order == Bucket.Sorted && b.size > 1 &&
        (b.size > Bucket.SortLimit || keys.compare(e.key, b.entries(b.size - 2).key) > 0)
      ) {
        b.order = Bucket.Unordered
      }
    }
  }

  /** The entry of `b` with the smallest key, ordering the bucket first if it is unordered. */
  private[this] def first(b: Bucket[K, V]): Entry[K, V] = b.order match {
    case Bucket.Heap => b.entries(0)
    case Bucket.Sorted => b.entries(b.size - 1)
    case _ =>
      if (b.size <= Bucket.SortLimit) sortDescending(b) else heapify(b)
      first(b)
  }

  private[this] def leaveBucket(e: Entry[K, V]): Unit = {
    val b = e.bucket
    val i = e.slot
    b.size -= 1
    if (i == b.size) {
      b.entries(i) = null
    } else if (b.order == Bucket.Heap) {
      val last = b.entries(b.size)
      b.entries(b.size) = null
      if (keys.compare(last.key, e.key) < 0) keySiftUp(b, last, i) else keySiftDown(b, last, i)
    } else if (b.order == Bucket.Sorted) {
      // Close the gap, keeping the order (sorted buckets are small).
      var j = i
      while (j < b.size) {
        val moved = b.entries(j + 1)
        b.entries(j) = moved
        moved.slot = j
        j += 1
      }
      b.entries(b.size) = null
    } else {
      val last = b.entries(b.size)
      b.entries(b.size) = null
      b.entries(i) = last
      last.slot = i
    }
    e.bucket = null
    e.slot = -1
    if (b.size == 0) dropBucket(b)
  }

  /** Insertion sort, largest key first, so that the smallest leaves from the end. */
  private[this] def sortDescending(b: Bucket[K, V]): Unit = {
    val es = b.entries
    val n = b.size
    // A bucket's entries arrived up to the stream's disorder apart, so each entry and its key are usually cache
    // misses. Comparing neighbours in a pass whose iterations do not depend on each other lets the CPU wait for
    // all of those misses at once, where the insertion sort below would wait for them one after another; and
    // a bucket that arrived in descending key order needs no sort at all.
    var descending = true
    var i = 1
    while (i < n) {
      descending &= keys.compare(es(i - 1).key, es(i).key) > 0
      i += 1
    }
    if (descending) {
      i = 0
      while (i < n) { es(i).slot = i; i += 1 }
      b.order = Bucket.Sorted
      return
    }
    i = 1
    while (i < n) {
      val e = es(i)
      var j = i - 1
      while (j >= 0 && keys.compare(es(j).key, e.key) < 0) {
        es(j + 1) = es(j)
        j -= 1
      }
      es(j + 1) = e
      i += 1
    }
    i = 0
    while (i < b.size) { es(i).slot = i; i += 1 }
    b.order = Bucket.Sorted
  }

  private[this] def heapify(b: Bucket[K, V]): Unit = {
    b.order = Bucket.Heap
    var i = (b.size >>> 1) - 1
    while (i >= 0) { keySiftDown(b, b.entries(i), i); i -= 1 }
    i = 0
    while (i < b.size) { b.entries(i).slot = i; i += 1 }
  }

  private[this] def keySiftUp(b: Bucket[K, V], e: Entry[K, V], start: Int): Unit = {
    val es = b.entries
    var i = start
    while (i > 0) {
      val parent = (i - 1) >>> 1
      val p = es(parent)
      if (keys.compare(e.key, p.key) >= 0) { es(i) = e; e.slot = i; return }
      es(i) = p
      p.slot = i
      i = parent
    }
    es(i) = e
    e.slot = i
  }

  private[this] def keySiftDown(b: Bucket[K, V], e: Entry[K, V], start: Int): Unit = {
    val es = b.entries
    val n = b.size
    var i = start
    val half = n >>> 1
    while (i < half) {
      var child = 2 * i + 1
      val right = child + 1
      if (right < n && keys.compare(es(right).key, es(child).key) < 0) child = right
      val c = es(child)
      if (keys.compare(c.key, e.key) >= 0) { es(i) = e; e.slot = i; return }
      es(i) = c
      c.slot = i
      i = child
    }
    es(i) = e
    e.slot = i
  }

  // Buckets: a binary min-heap of ids by time, found by time through `byTimeIds`.

  private[this] def bucketFor(time: Long): Bucket[K, V] = {
    val mask = byTimeIds.length - 1
    var i = timeSlot(time)
    var slotId = byTimeIds(i)
    while (slotId != 0) {
      if (byTimeTimes(i) == time) return bucketsById(slotId - 1)
      i = (i + 1) & mask
      slotId = byTimeIds(i)
    }
    if (bucketCount == bucketTimes.length) {
      val n = bucketCount * 2
      bucketsById = java.util.Arrays.copyOf(bucketsById, n)
      bucketTimes = java.util.Arrays.copyOf(bucketTimes, n)
      bucketIds = java.util.Arrays.copyOf(bucketIds, n)
      positions = java.util.Arrays.copyOf(positions, n)
      freeIds = java.util.Arrays.copyOf(freeIds, n)
    }
    // Ids are 0 until bucketCount + freeCount; the free ones are reused first.
    val id = if (freeCount > 0) { freeCount -= 1; freeIds(freeCount) }
    else bucketCount
    val b = new Bucket[K, V](time, id)
    bucketsById(id) = b
    if (bucketCount + 1 > (byTimeIds.length >> 1)) {
      growByTime()
      i = timeSlot(time)
      while (byTimeIds(i) != 0) i = (i + 1) & (byTimeIds.length - 1)
    }
    byTimeIds(i) = id + 1
    byTimeTimes(i) = time
    bucketCount += 1
    timeSiftUp(time, id, bucketCount - 1)
    b
  }

  private[this] def dropBucket(b: Bucket[K, V]): Unit = {
    // Out of the lookup table: backward-shift deletion keeps every remaining bucket reachable from its home slot.
    val mask = byTimeIds.length - 1
    var hole = timeSlot(b.time)
    while (byTimeIds(hole) != b.id + 1) hole = (hole + 1) & mask
    byTimeIds(hole) = 0
    var j = (hole + 1) & mask
    while (byTimeIds(j) != 0) {
      val home = timeSlot(byTimeTimes(j))
      val movable = if (hole <= j) home <= hole || home > j else home <= hole && home > j
      if (movable) {
        byTimeIds(hole) = byTimeIds(j)
        byTimeTimes(hole) = byTimeTimes(j)
        byTimeIds(j) = 0
        hole = j
      }
      j = (j + 1) & mask
    }
    // Out of the time heap.
    val i = positions(b.id)
    bucketCount -= 1
    if (i != bucketCount) {
      val lastTime = bucketTimes(bucketCount)
      val lastId = bucketIds(bucketCount)
      if (lastTime < b.time) timeSiftUp(lastTime, lastId, i) else timeSiftDown(lastTime, lastId, i)
    }
    bucketsById(b.id) = null
    freeIds(freeCount) = b.id
    freeCount += 1
  }

  private[this] def timeSiftUp(t: Long, id: Int, start: Int): Unit = {
    var i = start
    while (i > 0) {
      val parent = (i - 1) >>> 1
      if (bucketTimes(parent) <= t) { place(t, id, i); return }
      move(parent, i)
      i = parent
    }
    place(t, id, i)
  }

  private[this] def timeSiftDown(t: Long, id: Int, start: Int): Unit = {
    val n = bucketCount
    var i = start
    val half = n >>> 1
    while (i < half) {
      var child = 2 * i + 1
      val right = child + 1
      if (right < n && bucketTimes(right) < bucketTimes(child)) child = right
      if (bucketTimes(child) >= t) { place(t, id, i); return }
      move(child, i)
      i = child
    }
    place(t, id, i)
  }

  private[this] def move(from: Int, to: Int): Unit = {
    bucketTimes(to) = bucketTimes(from)
    val id = bucketIds(from)
    bucketIds(to) = id
    positions(id) = to
  }

  private[this] def place(t: Long, id: Int, i: Int): Unit = {
    bucketTimes(i) = t
    bucketIds(i) = id
    positions(id) = i
  }

  private[this] def timeSlot(time: Long): Int = ((time * 0x9e3779b97f4a7c15L) >>> byTimeShift).toInt

  private[this] def growByTime(): Unit = {
    byTimeIds = new Array[Int](byTimeIds.length * 2)
    byTimeTimes = new Array[Long](byTimeIds.length)
    byTimeShift -= 1
    val mask = byTimeIds.length - 1
    var k = 0
    while (k < bucketCount) {
      val t = bucketTimes(k)
      var i = timeSlot(t)
      while (byTimeIds(i) != 0) i = (i + 1) & mask
      byTimeIds(i) = bucketIds(k) + 1
      byTimeTimes(i) = t
      k += 1
    }
  }

  private[this] def growTable(): Unit = {
    val old = table
    val grown = new Array[Entry[K, V]](old.length * 2)
    var i = 0
    while (i < old.length) {
      var e = old(i)
      // Emptied as it is read: a discarded table that the collector has already promoted would otherwise keep
      // every entry it points to alive, and promoted, through young collections until the next full marking,
      // long after those entries left the buffer.
      old(i) = null
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
    var next: Entry[K, V] = _
    var bucket: Bucket[K, V] = _
    var slot: Int = -1
  }

  /** The entries sharing one buffer time, in the `order` below; `id` finds the bucket's place in the time heap. */
  private[core] final class Bucket[K, V](val time: Long, val id: Int) {
    var entries: Array[Entry[K, V]] = new Array[Entry[K, V]](4)
    var size = 0
    var order: Int = Bucket.Unordered
  }

  private[core] object Bucket {

    /** Entries in no particular order (only ever asked for their smallest key when the bucket is first). */
    val Unordered = 0

    /** Sorted by key, largest first: the smallest key is the last entry. */
    val Sorted = 1

    /** A binary min-heap by key: the smallest key is the first entry. */
    val Heap = 2

    /** Buckets up to this size are sorted when first asked for their smallest key; larger ones become heaps. */
    val SortLimit = 16
  }
}
