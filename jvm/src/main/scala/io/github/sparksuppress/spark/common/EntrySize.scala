package io.github.sparksuppress.spark.common

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

import io.github.sparksuppress.core.EntrySizeModel

/**
 * The byte size a buffered entry counts against `maxBytes`, modelled on Kafka's estimate so that a bound tuned for a
 * Kafka Streams application means about the same here:
 *
 * {{{
 *   size = 28 + keySize (+ 8 for a windowed key) + valueSize        (valueSize = 0 for a tombstone)
 * }}}
 *
 * 28 is Kafka's fixed per-entry charge (buffer time 8, timestamp 8, offset 8, partition 4). keySize and valueSize are
 * what Kafka's default serializers would write: UTF-8 bytes for strings, the width of fixed-size values (8 for longs,
 * doubles and timestamps, 4 for ints, floats and dates, 2 for shorts, 1 for bytes and booleans), the length of
 * binaries, the sum over the fields of a struct or the elements of an array or map, and 0 for null. The value columns
 * are all columns other than the key, event-time, window and tombstone ones.
 */
private[sparksuppress] object EntrySize {
  val FixedOverhead: Long = 28L
  val WindowOverhead: Long = 8L

  def of(t: DataType, v: Any): Long = if (v == null) 0L
  else t match {
    case BooleanType | ByteType => 1L
    case ShortType => 2L
    case IntegerType | FloatType | DateType | _: YearMonthIntervalType => 4L
    case LongType | DoubleType | TimestampType | TimestampNTZType | _: DayTimeIntervalType => 8L
    case CalendarIntervalType => 16L
    case _: StringType | _: CharType | _: VarcharType => utf8Length(v.toString)
    case BinaryType => v.asInstanceOf[Array[Byte]].length.toLong
    case _: DecimalType =>
      val bd = v match {
        case b: java.math.BigDecimal => b
        case b: scala.math.BigDecimal => b.bigDecimal
        case d: Decimal => d.toJavaBigDecimal
      }
      bd.unscaledValue.toByteArray.length.toLong
    case Variant() => (Variant.value(v).length + Variant.metadata(v).length).toLong
    case s: StructType =>
      val r = v.asInstanceOf[Row]
      var total = 0L
      var i = 0
      while (i < s.length) { if (!r.isNullAt(i)) total += of(s.fields(i).dataType, r.get(i)); i += 1 }
      total
    case a: ArrayType =>
      v match {
        case xs: scala.collection.Seq[_] => xs.iterator.map(of(a.elementType, _)).sum
        case xs: Array[_] => xs.iterator.map(of(a.elementType, _)).sum
        case _ => 0L
      }
    case m: MapType =>
      v.asInstanceOf[scala.collection.Map[Any, Any]].iterator.map { case (k, x) =>
        of(m.keyType, k) + of(m.valueType, x)
      }.sum
    case _ => 0L
  }

  /**
   * The size of one buffered entry under `model`: Kafka's formula above, or the value's bytes alone. `row` may be
   * null (an entry known only by its key and window), which counts as a tombstone with an empty key.
   */
  def ofEntry(
      model: EntrySizeModel,
      row: Row,
      schema: StructType,
      keyColumns: Array[Int],
      valueColumns: Array[Int],
      windowed: Boolean,
      tombstone: Boolean
  ): Long = {
    val value = if (tombstone || row == null) 0L else ofColumns(row, schema, valueColumns)
    model match {
      case EntrySizeModel.ValueBytes => value
      case EntrySizeModel.Kafka =>
        val key = if (row == null) 0L else ofColumns(row, schema, keyColumns)
        FixedOverhead + key + (if (windowed) WindowOverhead else 0L) + value
    }
  }

  /** Sum of the sizes of `row`'s columns at `indices`. */
  def ofColumns(row: Row, schema: StructType, indices: Array[Int]): Long = {
    var total = 0L
    var i = 0
    while (i < indices.length) {
      val c = indices(i)
      if (!row.isNullAt(c)) total += of(schema.fields(c).dataType, row.get(c))
      i += 1
    }
    total
  }

  private def utf8Length(s: String): Long = {
    var n = 0L
    var i = 0
    while (i < s.length) {
      val c = s.charAt(i)
      if (c < 0x80) n += 1
      else if (c < 0x800) n += 2
      else if (Character.isHighSurrogate(c) && i + 1 < s.length && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4; i += 1
      } else n += 3
      i += 1
    }
    n
  }

}
