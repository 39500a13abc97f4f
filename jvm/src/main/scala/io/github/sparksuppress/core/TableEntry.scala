package io.github.sparksuppress.core

/**
 * What the table side of a stream-table join holds for one key: its version history (a versioned table) or its latest
 * value (a non-versioned one). A null value is a tombstone (deletion).
 */
sealed trait TableEntry[V >: Null] {

  /** Applies an accepted write; `tableTime` is the table's observed stream time once the write is counted. */
  def write(timestamp: Long, value: V, tableTime: Long): Unit

  /** The value a stream record with timestamp `asOf` joins with (null for none), at table time `tableTime`. */
  def lookup(asOf: Long, tableTime: Long): V

  /** True when the entry answers every lookup with null and may be forgotten. */
  def isEmpty: Boolean
}

object TableEntry {
  def apply[V >: Null](spec: StreamTableJoinSpec): TableEntry[V] = spec.historyRetentionMs match {
    case Some(retention) => new Versioned[V](new VersionedHistory[V](retention))
    case None => new Latest[V]
  }

  /** A versioned table's key: as-of lookups, history pruned on every write. */
  final class Versioned[V >: Null](val history: VersionedHistory[V]) extends TableEntry[V] {
    def write(timestamp: Long, value: V, tableTime: Long): Unit = {
      history.put(timestamp, value)
      history.prune(tableTime)
    }
    def lookup(asOf: Long, tableTime: Long): V = history.get(asOf, tableTime)
    // A lone tombstone still matters: it hides an older write that may yet arrive inside the history.
    def isEmpty: Boolean = history.isEmpty
  }

  /** A non-versioned table's key: the last write in arrival order wins, whatever its timestamp. */
  final class Latest[V >: Null] extends TableEntry[V] {
    private[this] var ts = TableStreamTime.None
    private[this] var current: V = null
    def timestamp: Long = ts
    def value: V = current
    def write(timestamp: Long, value: V, tableTime: Long): Unit = { ts = timestamp; current = value }
    def lookup(asOf: Long, tableTime: Long): V = current
    def isEmpty: Boolean = current == null
  }
}
