package io.github.sparksuppress.spark.common

import java.nio.charset.StandardCharsets
import java.time.{Duration => JDuration, Instant, LocalDate, LocalDateTime, Period}

import scala.jdk.CollectionConverters._
import scala.util.hashing.MurmurHash3

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.CalendarInterval

import io.github.sparksuppress.core.{ByteReader, ByteWriter}

/**
 * Writes and reads the buffered rows in stored state.
 *
 * The stored form begins with a schema descriptor (each column's name and type, hashed), followed by rows in that
 * column order. Reading with a different schema maps columns by name: columns that were added since come back null,
 * columns that were dropped are skipped, and a column whose type changed stops the query with an error that names it.
 * So an upstream change such as a new column does not lose buffered records.
 */
private[sparksuppress] final class RowCodec(val schema: StructType) extends Serializable {
  import RowCodec._

  private val writers: Array[ValueWriter] = schema.fields.map(f => writerFor(f.dataType, f.name))
  private val readers: Array[ValueReader] = schema.fields.map(f => readerFor(f.dataType))
  private val descriptor: Array[(Int, Int)] = RowCodec.descriptor(schema)

  def writeDescriptor(out: ByteWriter): Unit = {
    out.writeVarLong(descriptor.length.toLong)
    descriptor.foreach { case (n, t) => out.writeZigZag(n.toLong); out.writeZigZag(t.toLong) }
  }

  /** Reads a descriptor and returns a reader of rows written under it, producing rows of [[schema]]. */
  def readDescriptor(in: ByteReader): ByteReader => Row = {
    val n = in.readCount("columns")
    val stored = Array.fill(n)((in.readZigZag().toInt, in.readZigZag().toInt))
    if (
      java.util.Arrays.equals(stored.map(_._1), descriptor.map(_._1)) &&
      java.util.Arrays.equals(stored.map(_._2), descriptor.map(_._2))
    ) {
      readRow
    } else {
      val target = stored.map { case (nameHash, typeHash) =>
        val i = descriptor.indexWhere(_._1 == nameHash)
        if (i >= 0 && descriptor(i)._2 != typeHash) {
          val f = schema.fields(i)
          throw new IllegalStateException(
            s"column '${f.name}' changed type since the buffered records were stored (now " +
              s"${f.dataType.simpleString}); " +
              "spark-suppress cannot read them back. Restore the column's type, or start from a new checkpoint " +
              "(the buffered records would be lost)."
          )
        }
        i
      }
      in2 => {
        val values = new Array[Any](schema.length)
        val nulls = readBitmap(in2, stored.length)
        var j = 0
        while (j < stored.length) {
          if (!nulls(j)) {
            val len = in2.readVarLong().toInt
            if (target(j) >= 0) values(target(j)) = readers(target(j))(in2) else in2.skip(len)
          }
          j += 1
        }
        Row.fromSeq(values.toSeq)
      }
    }
  }

  def writeRow(out: ByteWriter, row: Row): Unit = {
    val n = schema.length
    writeBitmap(out, n, i => row.isNullAt(i))
    var i = 0
    while (i < n) {
      if (!row.isNullAt(i)) {
        // Length-prefixed so that a reader that dropped this column can skip it.
        val mark = out.beginLength()
        writers(i)(out, row.get(i))
        out.endLength(mark)
      }
      i += 1
    }
  }

  def readRow(in: ByteReader): Row = {
    val n = schema.length
    val nulls = readBitmap(in, n)
    val values = new Array[Any](n)
    var i = 0
    while (i < n) {
      if (!nulls(i)) { in.readVarLong(); values(i) = readers(i)(in) }
      i += 1
    }
    Row.fromSeq(values.toSeq)
  }
}

private[sparksuppress] object RowCodec {
  private type ValueWriter = (ByteWriter, Any) => Unit
  private type ValueReader = ByteReader => Any

  def descriptor(schema: StructType): Array[(Int, Int)] =
    schema.fields.map(f => (f.name.hashCode, typeHash(f.dataType)))

  private[common] def typeHash(t: DataType): Int = t match {
    case s: StructType => seqHash(s.fields.map(f => tupleHash(f.name.hashCode, typeHash(f.dataType))))
    case a: ArrayType => tupleHash("array".hashCode, typeHash(a.elementType))
    case m: MapType => tupleHash("map".hashCode, typeHash(m.keyType), typeHash(m.valueType))
    case _: StringType | _: CharType | _: VarcharType => "string".hashCode
    case other => other.typeName.hashCode
  }

  // The descriptor is stored with the rows, so its hashes must not depend on the Scala version. They are the
  // hashCodes Scala 2.13 gives a tuple and a sequence of the element hashes (Scala 2.12's differ: its tuple hash
  // leaves out the class name, its sequence hash has no case for evenly stepped hashes, which 2.13 hashes as a range).

  private def tupleHash(elements: Int*): Int = {
    var h = MurmurHash3.mix(MurmurHash3.productSeed, s"Tuple${elements.length}".hashCode)
    elements.foreach(e => h = MurmurHash3.mix(h, e))
    MurmurHash3.finalizeHash(h, elements.length)
  }

  private def seqHash(hashes: Array[Int]): Int = {
    val n = hashes.length
    val step = if (n < 2) 0 else hashes(1) - hashes(0)
    if (n == 2 || n > 2 && step != 0 && (2 until n).forall(i => hashes(i) - hashes(i - 1) == step)) {
      MurmurHash3.finalizeHash(
        MurmurHash3.mix(
          MurmurHash3.mix(MurmurHash3.mix(MurmurHash3.seqSeed, hashes(0)), step),
          hashes(n - 1)
        ),
        0
      )
    } else MurmurHash3.finalizeHash(hashes.foldLeft(MurmurHash3.seqSeed)(MurmurHash3.mix), n)
  }

  /** Fails at build time for column types the stored form does not cover. */
  def requireSupported(t: DataType, path: String): Unit = t match {
    case s: StructType => s.fields.foreach(f => requireSupported(f.dataType, s"$path.${f.name}"))
    case a: ArrayType => requireSupported(a.elementType, s"$path[]")
    case m: MapType => requireSupported(m.keyType, s"$path{key}"); requireSupported(m.valueType, s"$path{value}")
    case _: UserDefinedType[_] =>
      throw new IllegalArgumentException(
        s"column '$path' has the user-defined type ${t.simpleString}, which spark-suppress cannot buffer; " +
          "convert it to a Spark SQL type (e.g. a struct) before the operator."
      )
    case _ =>
  }

  private def writeBitmap(out: ByteWriter, n: Int, isNull: Int => Boolean): Unit = {
    var i = 0
    while (i < n) {
      var b = 0
      var j = 0
      while (j < 8 && i + j < n) { if (isNull(i + j)) b |= 1 << j; j += 1 }
      out.writeByte(b)
      i += 8
    }
  }

  private def readBitmap(in: ByteReader, n: Int): Array[Boolean] = {
    val nulls = new Array[Boolean](n)
    var i = 0
    while (i < n) {
      val b = in.readByte()
      var j = 0
      while (j < 8 && i + j < n) { nulls(i + j) = (b & (1 << j)) != 0; j += 1 }
      i += 8
    }
    nulls
  }

  private def writerFor(t: DataType, path: String): ValueWriter = t match {
    case BooleanType => (o, v) => o.writeByte(if (v.asInstanceOf[Boolean]) 1 else 0)
    case ByteType => (o, v) => o.writeZigZag(v.asInstanceOf[Byte].toLong)
    case ShortType => (o, v) => o.writeZigZag(v.asInstanceOf[Short].toLong)
    case IntegerType => (o, v) => o.writeZigZag(v.asInstanceOf[Int].toLong)
    case LongType => (o, v) => o.writeZigZag(v.asInstanceOf[Long])
    case FloatType => (o, v) => o.writeZigZag(java.lang.Float.floatToRawIntBits(v.asInstanceOf[Float]).toLong)
    case DoubleType => (o, v) => o.writeZigZag(java.lang.Double.doubleToRawLongBits(v.asInstanceOf[Double]))
    case _: StringType | _: CharType | _: VarcharType =>
      (o, v) => o.writeBytes(v.toString.getBytes(StandardCharsets.UTF_8))
    case BinaryType => (o, v) => o.writeBytes(v.asInstanceOf[Array[Byte]])
    case _: DecimalType => (o, v) => {
        val d = v match {
          case b: java.math.BigDecimal => b
          case b: scala.math.BigDecimal => b.bigDecimal
          case d: Decimal => d.toJavaBigDecimal
        }
        o.writeZigZag(d.scale.toLong)
        o.writeBytes(d.unscaledValue.toByteArray)
      }
    case DateType => (o, v) =>
        v match {
          case d: java.sql.Date => o.writeByte(0); o.writeZigZag(d.toLocalDate.toEpochDay)
          case d: LocalDate => o.writeByte(1); o.writeZigZag(d.toEpochDay)
        }
    case TimestampType => (o, v) =>
        v match {
          case t: java.sql.Timestamp => o.writeByte(0); o.writeZigZag(t.getTime); o.writeZigZag(t.getNanos.toLong)
          case i: Instant => o.writeByte(1); o.writeZigZag(i.getEpochSecond); o.writeZigZag(i.getNano.toLong)
        }
    case TimestampNTZType => (o, v) => {
        val t = v.asInstanceOf[LocalDateTime]
        o.writeZigZag(t.toLocalDate.toEpochDay)
        o.writeZigZag(t.toLocalTime.toNanoOfDay)
      }
    case _: DayTimeIntervalType => (o, v) => {
        val d = v.asInstanceOf[JDuration]
        o.writeZigZag(d.getSeconds); o.writeZigZag(d.getNano.toLong)
      }
    case _: YearMonthIntervalType => (o, v) => o.writeZigZag(v.asInstanceOf[Period].toTotalMonths)
    case CalendarIntervalType => (o, v) => {
        val c = v.asInstanceOf[CalendarInterval]
        o.writeZigZag(c.months.toLong); o.writeZigZag(c.days.toLong); o.writeZigZag(c.microseconds)
      }
    case Variant() => (o, v) => { o.writeBytes(Variant.value(v)); o.writeBytes(Variant.metadata(v)) }
    case NullType => (_, _) => ()
    case s: StructType =>
      val fields = s.fields.map(f => writerFor(f.dataType, s"$path.${f.name}"))
      (o, v) => {
        val r = v.asInstanceOf[Row]
        writeBitmap(o, fields.length, i => r.isNullAt(i))
        var i = 0
        while (i < fields.length) { if (!r.isNullAt(i)) fields(i)(o, r.get(i)); i += 1 }
      }
    case a: ArrayType =>
      val element = writerFor(a.elementType, s"$path[]")
      (o, v) => {
        val xs = v match {
          case s: scala.collection.Seq[_] => s
          case arr: Array[_] => arr.toSeq
          case l: java.util.List[_] => l.asScala.toSeq
        }
        o.writeVarLong(xs.length.toLong)
        writeBitmap(o, xs.length, i => xs(i) == null)
        xs.foreach(x => if (x != null) element(o, x))
      }
    case m: MapType =>
      val key = writerFor(m.keyType, s"$path{key}")
      val value = writerFor(m.valueType, s"$path{value}")
      (o, v) => {
        val entries = v match {
          case sm: scala.collection.Map[_, _] => sm.toSeq
          case jm: java.util.Map[_, _] => jm.asScala.toSeq
        }
        o.writeVarLong(entries.length.toLong)
        writeBitmap(o, entries.length, i => entries(i)._2 == null)
        entries.foreach { case (k, x) => key(o, k); if (x != null) value(o, x) }
      }
    case other => requireSupported(other, path); throw new IllegalArgumentException(s"unsupported type $other at $path")
  }

  private def readerFor(t: DataType): ValueReader = t match {
    case BooleanType => in => in.readByte() != 0
    case ByteType => in => in.readZigZag().toByte
    case ShortType => in => in.readZigZag().toShort
    case IntegerType => in => in.readZigZag().toInt
    case LongType => in => in.readZigZag()
    case FloatType => in => java.lang.Float.intBitsToFloat(in.readZigZag().toInt)
    case DoubleType => in => java.lang.Double.longBitsToDouble(in.readZigZag())
    case _: StringType | _: CharType | _: VarcharType => in => new String(in.readBytes(), StandardCharsets.UTF_8)
    case BinaryType => in => in.readBytes()
    case _: DecimalType => in => {
        val scale = in.readZigZag().toInt
        new java.math.BigDecimal(new java.math.BigInteger(in.readBytes()), scale)
      }
    case DateType => in => {
        val kind = in.readByte()
        val day = LocalDate.ofEpochDay(in.readZigZag())
        if (kind == 0) java.sql.Date.valueOf(day) else day
      }
    case TimestampType => in => {
        if (in.readByte() == 0) {
          val t = new java.sql.Timestamp(in.readZigZag())
          t.setNanos(in.readZigZag().toInt)
          t
        } else Instant.ofEpochSecond(in.readZigZag(), in.readZigZag())
      }
    case TimestampNTZType => in =>
        LocalDateTime.of(LocalDate.ofEpochDay(in.readZigZag()), java.time.LocalTime.ofNanoOfDay(in.readZigZag()))
    case _: DayTimeIntervalType => in => JDuration.ofSeconds(in.readZigZag(), in.readZigZag())
    case _: YearMonthIntervalType => in => Period.ofMonths(in.readZigZag().toInt).normalized()
    case CalendarIntervalType => in =>
        new CalendarInterval(in.readZigZag().toInt, in.readZigZag().toInt, in.readZigZag())
    case Variant() => in => Variant(in.readBytes(), in.readBytes())
    case NullType => _ => null
    case s: StructType =>
      val fields = s.fields.map(f => readerFor(f.dataType))
      in => {
        val nulls = readBitmap(in, fields.length)
        val values = new Array[Any](fields.length)
        var i = 0
        while (i < fields.length) { if (!nulls(i)) values(i) = fields(i)(in); i += 1 }
        Row.fromSeq(values.toSeq)
      }
    case a: ArrayType =>
      val element = readerFor(a.elementType)
      in => {
        val n = in.readCount("array elements", perByte = 8)
        val nulls = readBitmap(in, n)
        val out = new Array[Any](n)
        var i = 0
        while (i < n) { if (!nulls(i)) out(i) = element(in); i += 1 }
        genericWrapArray(out) // no copy, on Scala 2.12 (a WrappedArray) as on 2.13 (an ArraySeq)
      }
    case m: MapType =>
      val key = readerFor(m.keyType)
      val value = readerFor(m.valueType)
      in => {
        val n = in.readCount("map entries", perByte = 8)
        val nulls = readBitmap(in, n)
        val b = Map.newBuilder[Any, Any]
        var i = 0
        while (i < n) { val k = key(in); b += k -> (if (nulls(i)) null else value(in)); i += 1 }
        b.result()
      }
    case other => throw new IllegalArgumentException(s"unsupported type $other")
  }
}
