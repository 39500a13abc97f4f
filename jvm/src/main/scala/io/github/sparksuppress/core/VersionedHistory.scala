package io.github.sparksuppress.core

/**
 * One key's versions in a versioned table (KIP-889), ordered by timestamp. A null value is a tombstone: it hides the
 * versions before it. Write admission (the table's observed stream time) is not decided here but by
 * [[TableStreamTime]], which sees every key of the table.
 */
final class VersionedHistory[V >: Null](val historyRetentionMs: Long) {
  require(historyRetentionMs >= 0, s"historyRetentionMs must be >= 0, got $historyRetentionMs")

  private[this] var times = new Array[Long](4)
  private[this] var values = new Array[AnyRef](4)
  private[this] var count = 0

  def size: Int = count
  def isEmpty: Boolean = count == 0

  /** The version timestamps, oldest first. */
  def timestamps: Seq[Long] = times.take(count).toSeq

  /** Adds the version at `timestamp`; a version with the same timestamp is replaced. */
  def put(timestamp: Long, value: V): Unit = {
    val i = search(timestamp)
    if (i >= 0) values(i) = value.asInstanceOf[AnyRef]
    else {
      val at = -i - 1
      if (count == times.length) {
        times = java.util.Arrays.copyOf(times, count * 2)
        values = java.util.Arrays.copyOf(values, count * 2)
      }
      System.arraycopy(times, at, times, at + 1, count - at)
      System.arraycopy(values, at, values, at + 1, count - at)
      times(at) = timestamp
      values(at) = value.asInstanceOf[AnyRef]
      count += 1
    }
  }

  /**
   * The value valid at `asOf` (null for none or a tombstone), as Kafka's `get(key, asOf)`: the version with the
   * greatest timestamp `<= asOf`; but once `asOf` is older than the table's history (`asOf < observed - retention`)
   * only the latest version may answer, and only if it is not newer than `asOf`.
   */
  def get(asOf: Long, observedStreamTime: Long): V = {
    if (count == 0) return null
    if (asOf < TimeMath.minus(observedStreamTime, historyRetentionMs)) {
      if (times(count - 1) <= asOf) valueAt(count - 1) else null
    } else {
      val i = floor(asOf)
      if (i < 0) null else valueAt(i)
    }
  }

  /**
   * Forgets the versions no lookup can reach any more: those older than the version valid at the history boundary
   * (`observed - retention`). Later lookups inside the history find that version or a newer one, lookups outside it
   * see only the latest version, and writes older than the boundary are refused.
   */
  def prune(observedStreamTime: Long): Unit = {
    val anchor = floor(TimeMath.minus(observedStreamTime, historyRetentionMs))
    if (anchor > 0) {
      System.arraycopy(times, anchor, times, 0, count - anchor)
      System.arraycopy(values, anchor, values, 0, count - anchor)
      java.util.Arrays.fill(values, count - anchor, count, null)
      count -= anchor
    }
  }

  /** Visits the versions oldest first (a null value is a tombstone). */
  def foreach(f: (Long, V) => Unit): Unit = {
    var i = 0
    while (i < count) { f(times(i), valueAt(i)); i += 1 }
  }

  private[this] def valueAt(i: Int): V = values(i).asInstanceOf[V]

  /** Index of `timestamp`, or `-(insertion point) - 1`. */
  private[this] def search(timestamp: Long): Int = java.util.Arrays.binarySearch(times, 0, count, timestamp)

  /** Index of the greatest timestamp `<= t`, or -1. */
  private[this] def floor(t: Long): Int = {
    val i = search(t)
    if (i >= 0) i else -i - 2
  }
}
