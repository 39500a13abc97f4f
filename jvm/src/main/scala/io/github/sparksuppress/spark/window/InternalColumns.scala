package io.github.sparksuppress.spark.window

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Expression}
import org.apache.spark.unsafe.types.UTF8String
import io.github.sparksuppress.spark.common._

/**
 * Bound expressions over Spark's internal rows. Where Spark bound one to a column of the row (always, as the plans
 * build them), it is read straight from the row, without evaluating the expression or boxing a primitive.
 */
private[spark] final class InternalColumns(expressions: Seq[Expression]) {
  private val evaluated = expressions.toArray
  private val ordinals = evaluated.map { case b: BoundReference => b.ordinal; case _ => -1 }

  def isNullAt(row: InternalRow, i: Int): Boolean = {
    val o = ordinals(i)
    if (o >= 0) row.isNullAt(o) else evaluated(i).eval(row) == null
  }

  def get(row: InternalRow, i: Int): Any = evaluated(i).eval(row)

  /** Column `i` of a STRING type, which must not be null. */
  def getUTF8String(row: InternalRow, i: Int): UTF8String = {
    val o = ordinals(i)
    if (o >= 0) row.getUTF8String(o) else evaluated(i).eval(row).asInstanceOf[UTF8String]
  }

  /** Column `i` of a LONG (or TIMESTAMP_NTZ) type, or `ifNull`. */
  def getLong(row: InternalRow, i: Int, ifNull: Long): Long = {
    val o = ordinals(i)
    if (o >= 0) { if (row.isNullAt(o)) ifNull else row.getLong(o) }
    else {
      val v = evaluated(i).eval(row)
      if (v == null) ifNull else v.asInstanceOf[Long]
    }
  }
}
