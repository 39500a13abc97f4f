package io.github.sparksuppress.spark.join

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow

/** A join's output row: the stream row's columns, then the table's value columns (null when the table has none). */
private[sparksuppress] object JoinedRows {
  def apply(stream: Row, table: Row, tableWidth: Int): Row = {
    val values = new Array[Any](stream.length + tableWidth)
    var i = 0
    while (i < stream.length) { values(i) = stream.get(i); i += 1 }
    if (table != null) {
      var j = 0
      while (j < tableWidth) { values(i + j) = table.get(j); j += 1 }
    }
    new GenericRow(values)
  }
}
