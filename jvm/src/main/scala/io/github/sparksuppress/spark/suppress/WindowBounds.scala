package io.github.sparksuppress.spark.suppress

import org.apache.spark.sql.Row
import org.apache.spark.sql.types.StructType
import io.github.sparksuppress.spark.common._

/** Reads a window's start and end (epoch millis) from an input row: from a struct column or two columns. */
private[sparksuppress] sealed trait WindowBounds extends Serializable {
  def start(row: Row, operator: String): Long
  def end(row: Row, operator: String): Long
}

private[sparksuppress] object WindowBounds {
  final case class InStruct(column: Int, name: String) extends WindowBounds {
    private def field(row: Row, i: Int, operator: String): Long = {
      if (row.isNullAt(column)) nullWindow(operator, name)
      val w = row.getStruct(column)
      if (w.isNullAt(i)) nullWindow(operator, name)
      SparkTime.millis(w.get(i))
    }
    def start(row: Row, operator: String): Long = field(row, 0, operator)
    def end(row: Row, operator: String): Long = field(row, 1, operator)
  }

  final case class Columns(startColumn: Int, endColumn: Int, names: String) extends WindowBounds {
    private def at(row: Row, c: Int, operator: String): Long = {
      if (row.isNullAt(c)) nullWindow(operator, names)
      SparkTime.millis(row.get(c))
    }
    def start(row: Row, operator: String): Long = at(row, startColumn, operator)
    def end(row: Row, operator: String): Long = at(row, endColumn, operator)
  }

  def millis(v: Any): Long = SparkTime.millis(v)

  /** Where `schema` carries the window `w` names, checked: a struct of two timestamps, or two timestamp columns. */
  def resolve(schema: StructType, w: WindowColumnNames, operator: String): WindowBounds = w match {
    case WindowColumnNames.Struct(c) =>
      val i = InputColumns.index(schema, c, "window", operator)
      schema.fields(i).dataType match {
        case st: StructType
            if st.length >= 2 && InputColumns.isTimestamp(st.fields(0).dataType) &&
              InputColumns.isTimestamp(st.fields(1).dataType) =>
          InStruct(i, c)
        case other =>
          throw new IllegalArgumentException(
            s"$operator: window column '$c' must be a struct of timestamps (start, end), as window() produces, " +
              s"but it is ${other.simpleString}."
          )
      }
    case WindowColumnNames.StartEnd(a, b) =>
      val i = InputColumns.index(schema, a, "window start", operator)
      val j = InputColumns.index(schema, b, "window end", operator)
      InputColumns.requireTimestamp(schema, i, "window start", operator)
      InputColumns.requireTimestamp(schema, j, "window end", operator)
      Columns(i, j, s"$a, $b")
  }

  private def nullWindow(operator: String, name: String): Nothing =
    throw new IllegalStateException(
      s"$operator: the window ($name) is null in an input row; windowed input needs a window on every row. " +
        "Filter such rows out before the operator."
    )
}
