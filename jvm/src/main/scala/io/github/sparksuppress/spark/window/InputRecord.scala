package io.github.sparksuppress.spark.window

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.types._
import io.github.sparksuppress.spark.common._

/**
 * A record as the aggregates see it: its evaluated aggregate inputs as external (`Row`) values, its event time and
 * its arrival sequence. One instance is reused for every record of a task.
 */
private[sparksuppress] abstract class InputRecord {
  var ts: Long = 0L
  var seq: Long = 0L
  def isNullAt(input: Int): Boolean
  def get(input: Int): Any
}

/** A record that arrived as a `Row` whose columns `offset`, `offset + 1`, ... are the aggregate inputs. */
private[sparksuppress] final class RowInputRecord extends InputRecord {
  var row: Row = _
  var offset: Int = 0
  def isNullAt(input: Int): Boolean = row.isNullAt(offset + input)
  def get(input: Int): Any = row.get(offset + input)
}

/**
 * A record still in Spark's internal form (the map side). Inputs are converted to external values only when an
 * aggregate reads them, and not at all for the types whose internal and external values are the same.
 */
private[sparksuppress] final class InternalInputRecord(inputs: Seq[Expression], schema: StructType)
    extends InputRecord {
  var row: InternalRow = _
  private val columns = new InternalColumns(inputs)
  private val external: Array[Any => Any] = schema.fields.map(f => InternalInputRecord.toExternal(f.dataType))

  def isNullAt(input: Int): Boolean = columns.isNullAt(row, input)

  def get(input: Int): Any = {
    val v = columns.get(row, input)
    if (v == null) null else external(input)(v)
  }
}

private object InternalInputRecord {
  def toExternal(t: DataType): Any => Any = t match {
    case BooleanType | ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType | BinaryType | NullType =>
      identity
    case other => CatalystTypeConverters.createToScalaConverter(other)
  }
}
