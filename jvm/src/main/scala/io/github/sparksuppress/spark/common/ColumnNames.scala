package io.github.sparksuppress.spark.common

/** Column names as Spark's parser reads them. */
private[sparksuppress] object ColumnNames {

  /** The boolean output column that flags late rows, which operators add when they emit late records. */
  val Late: String = "late"

  /** `name` quoted so that dots, spaces and backticks in it are taken literally, never as nested fields. */
  def quote(name: String): String = "`" + name.replace("`", "``") + "`"
}
