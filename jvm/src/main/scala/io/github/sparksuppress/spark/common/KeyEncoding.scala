package io.github.sparksuppress.spark.common

import java.nio.charset.StandardCharsets
import java.time.LocalDate

import org.apache.spark.sql.Row
import org.apache.spark.sql.api.java.UDF1
import org.apache.spark.sql.types._

/**
 * Turns key values into bytes with two properties the buffers need:
 *
 *   - injective: two rows encode alike only when Spark's grouping treats them as the same key, so the bytes can stand
 *     in for the key in hash tables and as the grouping column;
 *   - Kafka's order: for a key of one non-null column, comparing encodings unsigned-lexicographically orders keys as
 *     Kafka orders their default serializations (strings by UTF-8 bytes with a shorter prefix first, integers by
 *     big-endian bytes). That order breaks buffer-time ties, so it decides what a size bound evicts.
 *
 * Layout per column: `0x00` for null, else `0x01` and the value; strings and binaries escape `0x00` as `0x00 0xFF`
 * and end with `0x00 0x00` (so no encoding is a prefix of another); fixed-width values are big-endian; arrays list
 * `0x02`+element or `0x01` (null element) and end with `0x00`.
 */
private[sparksuppress] object KeyEncoding {

  /** Rejects key types that Spark cannot group by or that the encoding does not cover. */
  def requireGroupable(t: DataType, path: String): Unit = t match {
    case s: StructType => s.fields.foreach(f => requireGroupable(f.dataType, s"$path.${f.name}"))
    case a: ArrayType => requireGroupable(a.elementType, s"$path[]")
    case _: MapType | Variant() | CalendarIntervalType | _: UserDefinedType[_] =>
      throw new IllegalArgumentException(
        s"key column '$path' has type ${t.simpleString}, which cannot be a grouping key; use atomic, struct or " +
          "array columns as keys."
      )
    case _ =>
  }

  final class Encoder(types: Array[DataType]) extends Serializable {
    def encode(row: Row): Array[Byte] = {
      val out = new java.io.ByteArrayOutputStream(32)
      var i = 0
      while (i < types.length) { writeValue(out, types(i), if (row.isNullAt(i)) null else row.get(i)); i += 1 }
      out.toByteArray
    }

    /** The encoding of `row` followed by a window's start and end in milliseconds (8 bytes big-endian each). */
    def encodeWithWindow(row: Row, startMs: Long, endMs: Long): Array[Byte] = {
      val key = encode(row)
      val out = java.nio.ByteBuffer.allocate(key.length + 16)
      out.put(key).putLong(startMs).putLong(endMs)
      out.array()
    }
  }

  def encoder(schema: StructType): Encoder = new Encoder(schema.fields.map(_.dataType))

  private def writeValue(out: java.io.ByteArrayOutputStream, t: DataType, v: Any): Unit = {
    if (v == null) { out.write(0); return }
    out.write(1)
    t match {
      case BooleanType => out.write(if (v.asInstanceOf[Boolean]) 1 else 0)
      case ByteType => out.write(v.asInstanceOf[Byte].toInt)
      case ShortType => writeBE(out, v.asInstanceOf[Short].toLong, 2)
      case IntegerType => writeBE(out, v.asInstanceOf[Int].toLong, 4)
      case LongType => writeBE(out, v.asInstanceOf[Long], 8)
      case FloatType =>
        val f = v.asInstanceOf[Float]
        writeBE(out, java.lang.Float.floatToIntBits(if (f == 0.0f) 0.0f else f).toLong, 4)
      case DoubleType =>
        val d = v.asInstanceOf[Double]
        writeBE(out, java.lang.Double.doubleToLongBits(if (d == 0.0) 0.0 else d), 8)
      case _: StringType | _: CharType | _: VarcharType =>
        writeEscaped(out, v.toString.getBytes(StandardCharsets.UTF_8))
      case BinaryType => writeEscaped(out, v.asInstanceOf[Array[Byte]])
      case d: DecimalType =>
        val bd = v match {
          case b: java.math.BigDecimal => b
          case b: scala.math.BigDecimal => b.bigDecimal
          case x: Decimal => x.toJavaBigDecimal
        }
        writeEscaped(out, bd.setScale(d.scale).unscaledValue.toByteArray)
      case DateType => writeBE(out, epochDay(v), 4)
      case TimestampType => writeBE(out, micros(v), 8)
      case TimestampNTZType => writeBE(out, micros(v), 8)
      case _: DayTimeIntervalType =>
        val d = v.asInstanceOf[java.time.Duration]
        writeBE(out, Math.addExact(Math.multiplyExact(d.getSeconds, 1000000L), d.getNano / 1000L), 8)
      case _: YearMonthIntervalType => writeBE(out, v.asInstanceOf[java.time.Period].toTotalMonths, 4)
      case s: StructType =>
        val r = v.asInstanceOf[Row]
        var i = 0
        while (i < s.length) { writeValue(out, s.fields(i).dataType, if (r.isNullAt(i)) null else r.get(i)); i += 1 }
      case a: ArrayType =>
        val xs = v.asInstanceOf[scala.collection.Seq[Any]]
        xs.foreach { x =>
          if (x == null) out.write(1) else { out.write(2); writeValue(out, a.elementType, x) }
        }
        out.write(0)
      case NullType =>
      case other => throw new IllegalArgumentException(s"cannot encode a key of type ${other.simpleString}")
    }
  }

  private def writeBE(out: java.io.ByteArrayOutputStream, v: Long, width: Int): Unit = {
    var shift = (width - 1) * 8
    while (shift >= 0) { out.write((v >>> shift).toInt & 0xff); shift -= 8 }
  }

  private def writeEscaped(out: java.io.ByteArrayOutputStream, bytes: Array[Byte]): Unit = {
    var i = 0
    while (i < bytes.length) {
      out.write(bytes(i).toInt)
      if (bytes(i) == 0) out.write(0xff)
      i += 1
    }
    out.write(0); out.write(0)
  }

  private def epochDay(v: Any): Long = v match {
    case d: java.sql.Date => d.toLocalDate.toEpochDay
    case d: LocalDate => d.toEpochDay
  }

  private def micros(v: Any): Long = SparkTime.micros(v)
}

/** Encodes a row's key (and window bounds) into the injective, Kafka-ordered bytes of [[KeyEncoding]]. */
private[sparksuppress] final class KeyBytesUdf(encoder: KeyEncoding.Encoder, keyCount: Int, windowed: Boolean)
    extends UDF1[Row, Array[Byte]] {
  override def call(r: Row): Array[Byte] =
    if (!windowed) encoder.encode(r)
    else {
      val start = if (r.isNullAt(keyCount)) Long.MinValue else SparkTime.millis(r.get(keyCount))
      val end = if (r.isNullAt(keyCount + 1)) Long.MinValue else SparkTime.millis(r.get(keyCount + 1))
      encoder.encodeWithWindow(r, start, end)
    }
}
