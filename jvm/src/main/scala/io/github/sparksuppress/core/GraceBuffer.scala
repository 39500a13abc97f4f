package io.github.sparksuppress.core

/**
 * The stream side's buffer of a stream-table join with a grace period (KIP-923). Records wait, ordered by
 * `(timestamp, key, arrival)`, until `timestamp <= streamTime - grace` (inclusive), where stream time is the largest
 * timestamp ever put into this buffer: records that are dropped or joined late never move it. Several records of one
 * key are all kept.
 *
 * A binary min-heap: put and release are O(log n). Not thread-safe: one buffer belongs to one shard.
 */
final class GraceBuffer[K, V](val graceMs: Long)(implicit keys: Ordering[K]) {
  import GraceBuffer.Entry
  require(graceMs >= 0, s"graceMs must be >= 0, got $graceMs")

  private[this] var heap = new Array[Entry[K, V]](16)
  private[this] var count = 0
  private[this] var bytes = 0L
  private[this] var time = TableStreamTime.None
  private[this] var nextSeq = 0L

  def numRecords: Int = count
  def sizeBytes: Long = bytes
  def isEmpty: Boolean = count == 0

  /** The largest timestamp put so far ([[TableStreamTime.None]] before the first). */
  def streamTime: Long = time

  /** The sequence number the next put gets (arrival order among equal timestamps and keys). */
  def nextSequence: Long = nextSeq

  /** A record is late once the buffer's stream time is past its timestamp plus the grace period. */
  def isLate(timestamp: Long): Boolean = TimeMath.minus(time, graceMs) > timestamp

  /** Buffers a record that is not late and moves stream time to its timestamp if that is later. */
  def put(key: K, timestamp: Long, value: V, size: Long): Unit = {
    require(!isLate(timestamp), s"a late record (timestamp $timestamp, stream time $time) is joined, not buffered")
    add(Entry(key, timestamp, nextSeq, value, size))
    nextSeq += 1
    if (timestamp > time) time = timestamp
  }

  /** Releases, oldest first, every record whose grace period has passed; returns how many. */
  def releaseDue(emit: Entry[K, V] => Unit): Int = {
    val limit = TimeMath.minus(time, graceMs)
    var n = 0
    while (count > 0 && heap(0).timestamp <= limit) { emit(poll()); n += 1 }
    n
  }

  /**
   * Releases, oldest first, every record whose grace period has passed at `time` (a clock kept elsewhere, e.g. a
   * watermark over all shards) or at this buffer's own stream time, whichever is later; returns how many. The
   * buffer's stream time does not move, so which records are late stays Kafka's rule.
   */
  def releaseDueAt(time: Long, emit: Entry[K, V] => Unit): Int = {
    val limit = TimeMath.minus(math.max(time, this.time), graceMs)
    var n = 0
    while (count > 0 && heap(0).timestamp <= limit) { emit(poll()); n += 1 }
    n
  }

  /** Visits every entry in no particular order. */
  def foreach(f: Entry[K, V] => Unit): Unit = {
    var i = 0
    while (i < count) { f(heap(i)); i += 1 }
  }

  /** Restores stored entries and clocks (used by [[GraceBufferCodec]]). */
  private[core] def restore(streamTime: Long, nextSequence: Long, entries: Iterator[Entry[K, V]]): Unit = {
    time = streamTime
    nextSeq = nextSequence
    entries.foreach(add)
  }

  private[this] def add(e: Entry[K, V]): Unit = {
    require(e.sizeBytes >= 0, s"size must be >= 0, got ${e.sizeBytes}")
    if (count == heap.length) heap = java.util.Arrays.copyOf(heap, count * 2)
    heap(count) = e
    count += 1
    bytes += e.sizeBytes
    siftUp(count - 1)
  }

  private[this] def poll(): Entry[K, V] = {
    val head = heap(0)
    count -= 1
    bytes -= head.sizeBytes
    heap(0) = heap(count)
    heap(count) = null
    if (count > 0) siftDown(0)
    head
  }

  private[this] def less(a: Entry[K, V], b: Entry[K, V]): Boolean =
    if (a.timestamp != b.timestamp) a.timestamp < b.timestamp
    else {
      val c = keys.compare(a.key, b.key)
      if (c != 0) c < 0 else a.seq < b.seq
    }

  private[this] def siftUp(start: Int): Unit = {
    val e = heap(start)
    var i = start
    while (i > 0 && less(e, heap((i - 1) >>> 1))) {
      heap(i) = heap((i - 1) >>> 1)
      i = (i - 1) >>> 1
    }
    heap(i) = e
  }

  private[this] def siftDown(start: Int): Unit = {
    val e = heap(start)
    var i = start
    val half = count >>> 1
    var done = false
    while (!done && i < half) {
      var child = 2 * i + 1
      if (child + 1 < count && less(heap(child + 1), heap(child))) child += 1
      if (less(heap(child), e)) { heap(i) = heap(child); i = child }
      else done = true
    }
    heap(i) = e
  }
}

object GraceBuffer {

  /** A buffered stream record: `seq` orders records of one key with one timestamp by arrival. */
  final case class Entry[K, V](key: K, timestamp: Long, seq: Long, value: V, sizeBytes: Long)
}
