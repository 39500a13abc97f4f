package io.github.sparksuppress.spark.window

import org.apache.spark.sql.types._
import io.github.sparksuppress.spark.common._

/**
 * Spark SQL's order of external (Row) values, for `min` and `max`: numbers by value with NaN greatest and -0.0 equal
 * to 0.0, strings by UTF-8 bytes (code point order, not Java's UTF-16 order), binaries unsigned lexicographically,
 * booleans false first, dates and times chronologically.
 */
private[spark] object ValueOrdering {

  def forType(t: DataType): Option[Ordering[Any]] = Option(t match {
    case ByteType | ShortType | IntegerType | LongType => by[Long](v => v.asInstanceOf[Number].longValue())
    case FloatType | DoubleType => fractional
    case _: DecimalType => by[java.math.BigDecimal](decimal)(Ordering.ordered[java.math.BigDecimal](identity))
    case _: StringType | _: CharType | _: VarcharType => strings
    case BinaryType => binaries
    case BooleanType => by[Boolean](_.asInstanceOf[Boolean])
    case DateType => by[Long](v => KeyDate.epochDay(v))
    case TimestampType | TimestampNTZType => by[Long](SparkTime.micros)
    case _: DayTimeIntervalType =>
      by[java.time.Duration](_.asInstanceOf[java.time.Duration])(Ordering.ordered[java.time.Duration](identity))
    case _: YearMonthIntervalType => by[Long](_.asInstanceOf[java.time.Period].toTotalMonths)
    case _ => null
  })

  val supportedTypes: String =
    "numbers, decimals, strings, binaries, booleans, dates, timestamps and intervals"

  private def by[T](f: Any => T)(implicit o: Ordering[T]): Ordering[Any] = new Ordering[Any] {
    def compare(a: Any, b: Any): Int = o.compare(f(a), f(b))
  }

  private def decimal(v: Any): java.math.BigDecimal = v match {
    case b: java.math.BigDecimal => b
    case b: scala.math.BigDecimal => b.bigDecimal
    case d: Decimal => d.toJavaBigDecimal
  }

  private val fractional: Ordering[Any] = new Ordering[Any] {
    def compare(a: Any, b: Any): Int = {
      val x = a.asInstanceOf[Number].doubleValue()
      val y = b.asInstanceOf[Number].doubleValue()
      if (x.isNaN) (if (y.isNaN) 0 else 1)
      else if (y.isNaN) -1
      else if (x < y) -1
      else if (x > y) 1
      else 0
    }
  }

  // UTF-8 byte order is code point order; comparing code points spares an encoding per comparison.
  private val strings: Ordering[Any] = new Ordering[Any] {
    def compare(a: Any, b: Any): Int = {
      val x = a.toString
      val y = b.toString
      var i = 0
      var j = 0
      while (i < x.length && j < y.length) {
        val cx = x.codePointAt(i)
        val cy = y.codePointAt(j)
        if (cx != cy) return Integer.compare(cx, cy)
        i += Character.charCount(cx)
        j += Character.charCount(cy)
      }
      java.lang.Boolean.compare(i < x.length, j < y.length)
    }
  }

  private val binaries: Ordering[Any] = new Ordering[Any] {
    def compare(a: Any, b: Any): Int =
      java.util.Arrays.compareUnsigned(a.asInstanceOf[Array[Byte]], b.asInstanceOf[Array[Byte]])
  }
}

/** Days since the epoch of a Spark date value (`java.sql.Date` or `LocalDate`). */
private[spark] object KeyDate {
  def epochDay(v: Any): Long = v match {
    case d: java.sql.Date => d.toLocalDate.toEpochDay
    case d: java.time.LocalDate => d.toEpochDay
  }
}
