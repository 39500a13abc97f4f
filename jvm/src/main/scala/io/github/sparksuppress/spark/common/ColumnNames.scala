package io.github.sparksuppress.spark.common

/** Column names as Spark's parser reads them. */
private[sparksuppress] object ColumnNames {

  /** `name` quoted so that dots, spaces and backticks in it are taken literally, never as nested fields. */
  def quote(name: String): String = "`" + name.replace("`", "``") + "`"
}
