package io.github.sparksuppress.spark.suppress

import io.github.sparksuppress.core.{EntrySizeModel, SuppressionClock, SuppressionSpec}

/**
 * One suppress operator as the adapter receives it from the API: the core's rules, already decided and validated, and
 * the names of the input's columns, which only the DataFrame can check.
 *
 * @param explicitName
 *   the name the user gave, if any (it guards the operator's state in the checkpoint)
 * @param window
 *   where windowed input carries its window (set exactly when the window's end is the buffer time)
 * @param sharded
 *   bounded buffers see all keys of a state partition at once, so they group by shard
 * @param spillToDisk
 *   the buffer must live in the RocksDB state store provider
 * @param emitLate
 *   (untilWindowCloses) updates for a window that has closed leave flagged in a `late` column
 * @param idleTimeoutMs
 *   (event-time clock) stream time runs on with the wall clock after this much idle time
 */
private[sparksuppress] final case class SuppressRequest(
    spec: SuppressionSpec,
    explicitName: Option[String],
    clock: SuppressionClock,
    sizeModel: EntrySizeModel,
    key: Seq[String],
    timestamp: String,
    window: Option[WindowColumnNames],
    tombstone: Option[String],
    sharded: Boolean,
    spillToDisk: Boolean,
    emitLate: Boolean = false,
    idleTimeoutMs: Option[Long] = None
) {
  def name: String = spec.name
}

/** Where an input row carries its window: a struct column as `window()` makes, or start and end columns. */
private[sparksuppress] sealed trait WindowColumnNames extends Serializable {

  /** The input columns that hold the window. */
  def columns: Seq[String] = this match {
    case WindowColumnNames.Struct(c) => Seq(c)
    case WindowColumnNames.StartEnd(a, b) => Seq(a, b)
  }
}

private[sparksuppress] object WindowColumnNames {
  final case class Struct(column: String) extends WindowColumnNames
  final case class StartEnd(start: String, end: String) extends WindowColumnNames
}
