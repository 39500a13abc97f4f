package io.github.sparksuppress.spark.common

/** Column names as Spark's parser reads them. */
private[sparksuppress] object ColumnNames {

  /** The boolean output column that flags late rows, which operators add when they emit late records. */
  val Late: String = "late"

  /** A windowed aggregation's window (`start`, `end`), as Spark's `window()` names it. */
  val Window: String = "window"

  /** Marks a session aggregation's retractions when it emits updates. */
  val Retraction: String = "retraction"

  /** `name` quoted so that dots, spaces and backticks in it are taken literally, never as nested fields. */
  def quote(name: String): String = "`" + name.replace("`", "``") + "`"
}
