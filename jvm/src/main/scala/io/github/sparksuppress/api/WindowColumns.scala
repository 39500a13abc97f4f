package io.github.sparksuppress.api

/** Where an input row carries its window: a struct column like Spark's `window()`, or two timestamp columns. */
sealed trait WindowColumns extends Serializable

object WindowColumns {

  /** A struct column with timestamp fields `start` and `end`, as `window(...)` and `session_window(...)` produce. */
  final case class Struct(column: String) extends WindowColumns

  /** Two timestamp columns: the window's start (inclusive) and end (exclusive). */
  final case class StartEnd(start: String, end: String) extends WindowColumns

  def struct(column: String): WindowColumns = Struct(column)
  def startEnd(start: String, end: String): WindowColumns = StartEnd(start, end)
}
