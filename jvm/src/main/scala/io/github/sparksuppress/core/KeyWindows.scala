package io.github.sparksuppress.core

/**
 * The open windows of one key, kept sorted as Kafka's stores iterate them: by start (time and sliding windows) or by
 * end, then start (session windows). A key rarely has more than a handful of windows, so a sorted array with binary
 * search beats any tree, allocates nothing per lookup and serializes in order.
 */
final class KeyWindows[B](val sessionOrder: Boolean) {
  private[this] var entries = new Array[WindowEntry[B]](4)
  private[this] var n = 0

  def size: Int = n
  def isEmpty: Boolean = n == 0
  def apply(i: Int): WindowEntry[B] = entries(i)

  private def compare(start: Long, end: Long, e: WindowEntry[B]): Int =
    if (sessionOrder) {
      val c = java.lang.Long.compare(end, e.end)
      if (c != 0) c else java.lang.Long.compare(start, e.start)
    } else java.lang.Long.compare(start, e.start)

  /** Index of the window with these bounds, or `-(insertion point) - 1` (ends matter for session order only). */
  def search(start: Long, end: Long): Int = {
    var lo = 0
    var hi = n - 1
    while (lo <= hi) {
      val mid = (lo + hi) >>> 1
      val c = compare(start, end, entries(mid))
      if (c > 0) lo = mid + 1 else if (c < 0) hi = mid - 1 else return mid
    }
    -(lo + 1)
  }

  /** The time or sliding window starting at `start`, or null. */
  def byStart(start: Long): WindowEntry[B] = {
    val i = search(start, 0L)
    if (i >= 0) entries(i) else null
  }

  /** Adds `e`, which must not collide with a window already present. */
  def insert(e: WindowEntry[B]): Unit = {
    val i = search(e.start, e.end)
    require(i < 0, s"window $e is present already")
    val at = -i - 1
    if (n == entries.length) entries = java.util.Arrays.copyOf(entries, n * 2)
    System.arraycopy(entries, at, entries, at + 1, n - at)
    entries(at) = e
    n += 1
  }

  def removeAt(i: Int): WindowEntry[B] = {
    val e = entries(i)
    System.arraycopy(entries, i + 1, entries, i, n - i - 1)
    n -= 1
    entries(n) = null
    e
  }

  def remove(e: WindowEntry[B]): Unit = {
    val i = search(e.start, e.end)
    require(i >= 0 && (entries(i) eq e), s"window $e is not present")
    removeAt(i)
  }

  def iterator: Iterator[WindowEntry[B]] = entries.iterator.take(n)

  override def toString: String = iterator.mkString("KeyWindows(", ", ", ")")
}
