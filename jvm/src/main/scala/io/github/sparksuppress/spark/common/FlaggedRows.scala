package io.github.sparksuppress.spark.common

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow

/** Output rows with a boolean flag column after the row's own (`late`, a table filter's `retraction`). */
private[sparksuppress] object FlaggedRows {

  /** `row`'s values, then `flag`. */
  def append(row: Row, flag: Boolean): Row = {
    val values = new Array[Any](row.length + 1)
    var i = 0
    while (i < row.length) { values(i) = row.get(i); i += 1 }
    values(row.length) = flag
    new GenericRow(values)
  }
}
