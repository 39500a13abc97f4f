package io.github.sparksuppress.spark.window

import java.math.{BigDecimal => JBigDecimal, RoundingMode}

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._

import io.github.sparksuppress.core.{ByteReader, ByteWriter}
import io.github.sparksuppress.spark.common._

/**
 * The running state of one aggregate in one window. `add` takes a record, `merge` another accumulator of the same
 * aggregate (a partial from before the shuffle, or a session being merged); both leave `other` untouched.
 */
private[sparksuppress] abstract class AggregatePartial {
  def add(record: InputRecord): Unit
  def merge(other: AggregatePartial): Unit
  def copy(): AggregatePartial

  /** The aggregate's value, as an external (Row) value of its result type. */
  def result(): Any
  def write(out: ByteWriter): Unit
  def read(in: ByteReader): Unit

  /** Called on buffers read back from stored state: forgets what only made sense within the batch that stored it. */
  def settle(): Unit = ()
}

/**
 * One aggregate column of a windowed aggregation, resolved on the driver from the user's Spark aggregate: its output
 * name and type, and where its inputs are among the evaluated aggregate inputs.
 */
private[sparksuppress] trait AggregateColumn extends Serializable {
  def name: String
  def resultType: DataType
  def newAccumulator(): AggregatePartial

  /** What the stored state depends on: a change makes stored buffers unreadable. */
  def layout: String
}

/** How Spark evaluates arithmetic that overflows (Spark's `EvalMode`): fail, return null, or wrap around. */
private[sparksuppress] sealed abstract class OverflowMode(val name: String) extends Serializable
private[sparksuppress] object OverflowMode {
  case object Fail extends OverflowMode("ansi")
  case object Null extends OverflowMode("try")
  case object Wrap extends OverflowMode("legacy")
}

/** `count(*)` (no inputs) or `count(a, b, ...)`: rows whose inputs are all non-null. */
private[sparksuppress] final case class CountAggregate(name: String, inputs: Array[Int]) extends AggregateColumn {
  def resultType: DataType = LongType
  def layout: String = s"count(${inputs.length})"
  def newAccumulator(): AggregatePartial = new CountAggregate.Acc(inputs)
}

private[sparksuppress] object CountAggregate {
  final class Acc(inputs: Array[Int]) extends AggregatePartial {
    var n = 0L
    def add(r: InputRecord): Unit = {
      var i = 0
      while (i < inputs.length) { if (r.isNullAt(inputs(i))) return; i += 1 }
      n += 1
    }
    def merge(other: AggregatePartial): Unit = n += other.asInstanceOf[Acc].n
    def copy(): AggregatePartial = { val c = new Acc(inputs); c.n = n; c }
    def result(): Any = n
    def write(out: ByteWriter): Unit = out.writeVarLong(n)
    def read(in: ByteReader): Unit = n = in.readVarLong()
  }
}

/**
 * `sum(x)` with Spark's result types: integral inputs sum to a long (overflow handled as Spark's eval mode says),
 * floating-point to a double, decimals exactly to `DECIMAL(min(p + 10, 38), s)`. Null when no input was non-null.
 */
private[sparksuppress] final case class SumAggregate(
    name: String,
    input: Int,
    inputType: DataType,
    resultType: DataType,
    overflow: OverflowMode
) extends AggregateColumn {
  def layout: String = s"sum(${inputType.simpleString})"
  def newAccumulator(): AggregatePartial = inputType match {
    case ByteType | ShortType | IntegerType | LongType => new SumAggregate.Integral(this)
    case FloatType | DoubleType => new SumAggregate.Fractional(this)
    case _: DecimalType => new SumAggregate.Exact(this)
  }
  private[spark] def overflowed(): Any = overflow match {
    case OverflowMode.Null => null
    case _ =>
      throw new ArithmeticException(
        s"sum '$name' overflowed ${resultType.simpleString} in a window. Use try_sum semantics by setting " +
          "spark.sql.ansi.enabled=false before building the query (the sum is then null on overflow), or sum a " +
          "wider type (e.g. cast the input to DECIMAL(38, 0))."
      )
  }
}

private[sparksuppress] object SumAggregate {
  final class Integral(spec: SumAggregate) extends AggregatePartial {
    var sum = 0L
    var any = false
    var overflow = false
    private def plus(v: Long): Unit = {
      val r = sum + v
      if (((sum ^ r) & (v ^ r)) < 0 && spec.overflow != OverflowMode.Wrap) overflow = true
      sum = r
    }
    def add(r: InputRecord): Unit = if (!r.isNullAt(spec.input)) {
      plus(r.get(spec.input).asInstanceOf[Number].longValue())
      any = true
    }
    def merge(other: AggregatePartial): Unit = {
      val o = other.asInstanceOf[Integral]
      if (o.any) { plus(o.sum); any = true; overflow ||= o.overflow }
    }
    def copy(): AggregatePartial = { val c = new Integral(spec); c.sum = sum; c.any = any; c.overflow = overflow; c }
    def result(): Any = if (!any) null else if (overflow) spec.overflowed() else sum
    def write(out: ByteWriter): Unit = {
      out.writeByte((if (any) 1 else 0) | (if (overflow) 2 else 0)); out.writeZigZag(sum)
    }
    def read(in: ByteReader): Unit = {
      val f = in.readByte(); any = (f & 1) != 0; overflow = (f & 2) != 0; sum = in.readZigZag()
    }
  }

  final class Fractional(spec: SumAggregate) extends AggregatePartial {
    var sum = 0.0
    var any = false
    def add(r: InputRecord): Unit = if (!r.isNullAt(spec.input)) {
      sum += r.get(spec.input).asInstanceOf[Number].doubleValue()
      any = true
    }
    def merge(other: AggregatePartial): Unit = {
      val o = other.asInstanceOf[Fractional]; if (o.any) { sum += o.sum; any = true }
    }
    def copy(): AggregatePartial = { val c = new Fractional(spec); c.sum = sum; c.any = any; c }
    def result(): Any = if (any) sum else null
    def write(out: ByteWriter): Unit = {
      out.writeByte(if (any) 1 else 0); out.writeZigZag(java.lang.Double.doubleToRawLongBits(sum))
    }
    def read(in: ByteReader): Unit = {
      any = in.readByte() != 0; sum = java.lang.Double.longBitsToDouble(in.readZigZag())
    }
  }

  final class Exact(spec: SumAggregate) extends AggregatePartial {
    var sum: JBigDecimal = null
    def add(r: InputRecord): Unit = if (!r.isNullAt(spec.input)) {
      val v = Decimals.of(r.get(spec.input))
      sum = if (sum == null) v else sum.add(v)
    }
    def merge(other: AggregatePartial): Unit = {
      val o = other.asInstanceOf[Exact].sum
      if (o != null) sum = if (sum == null) o else sum.add(o)
    }
    def copy(): AggregatePartial = { val c = new Exact(spec); c.sum = sum; c }
    def result(): Any =
      if (sum == null) null else Decimals.fit(sum, spec.resultType.asInstanceOf[DecimalType], spec.overflowed())
    def write(out: ByteWriter): Unit = Decimals.write(out, sum)
    def read(in: ByteReader): Unit = sum = Decimals.read(in)
  }
}

/** `avg(x)`: a double for numeric inputs, a decimal (Spark's result type, rounded half-up) for decimal inputs. */
private[sparksuppress] final case class AverageAggregate(
    name: String,
    input: Int,
    inputType: DataType,
    resultType: DataType,
    overflow: OverflowMode
) extends AggregateColumn {
  def layout: String = s"avg(${inputType.simpleString})"
  def newAccumulator(): AggregatePartial = inputType match {
    case _: DecimalType => new AverageAggregate.Exact(this)
    case _ => new AverageAggregate.Fractional(this)
  }
}

private[sparksuppress] object AverageAggregate {
  final class Fractional(spec: AverageAggregate) extends AggregatePartial {
    var sum = 0.0
    var n = 0L
    def add(r: InputRecord): Unit = if (!r.isNullAt(spec.input)) {
      sum += r.get(spec.input).asInstanceOf[Number].doubleValue()
      n += 1
    }
    def merge(other: AggregatePartial): Unit = { val o = other.asInstanceOf[Fractional]; sum += o.sum; n += o.n }
    def copy(): AggregatePartial = { val c = new Fractional(spec); c.sum = sum; c.n = n; c }
    def result(): Any = if (n == 0) null else sum / n
    def write(out: ByteWriter): Unit = {
      out.writeVarLong(n); out.writeZigZag(java.lang.Double.doubleToRawLongBits(sum))
    }
    def read(in: ByteReader): Unit = { n = in.readVarLong(); sum = java.lang.Double.longBitsToDouble(in.readZigZag()) }
  }

  final class Exact(spec: AverageAggregate) extends AggregatePartial {
    var sum: JBigDecimal = null
    var n = 0L
    def add(r: InputRecord): Unit = if (!r.isNullAt(spec.input)) {
      val v = Decimals.of(r.get(spec.input))
      sum = if (sum == null) v else sum.add(v)
      n += 1
    }
    def merge(other: AggregatePartial): Unit = {
      val o = other.asInstanceOf[Exact]
      if (o.sum != null) { sum = if (sum == null) o.sum else sum.add(o.sum); n += o.n }
    }
    def copy(): AggregatePartial = { val c = new Exact(spec); c.sum = sum; c.n = n; c }
    def result(): Any = if (n == 0) null
    else {
      val t = spec.resultType.asInstanceOf[DecimalType]
      Decimals.fit(
        sum.divide(JBigDecimal.valueOf(n), t.scale, RoundingMode.HALF_UP),
        t,
        if (spec.overflow == OverflowMode.Fail) throw new ArithmeticException(
          s"avg '${spec.name}' does not fit ${t.simpleString}; cast its input to a wider decimal."
        )
        else null
      )
    }
    def write(out: ByteWriter): Unit = { out.writeVarLong(n); Decimals.write(out, sum) }
    def read(in: ByteReader): Unit = { n = in.readVarLong(); sum = Decimals.read(in) }
  }
}

/** `min(x)` / `max(x)` in Spark SQL's value order; null when no input was non-null. */
private[sparksuppress] final case class ExtremeAggregate(name: String, input: Int, resultType: DataType, isMax: Boolean)
    extends AggregateColumn {
  def layout: String = s"${if (isMax) "max" else "min"}(${resultType.simpleString})"
  @transient private[spark] lazy val ordering: Ordering[Any] = ValueOrdering.forType(resultType).get
  @transient private[spark] lazy val values = new ValueCodec(resultType)
  def newAccumulator(): AggregatePartial = new ExtremeAggregate.Acc(this)
}

private[sparksuppress] object ExtremeAggregate {
  final class Acc(spec: ExtremeAggregate) extends AggregatePartial {
    var value: Any = null
    private def offer(v: Any): Unit =
      if (value == null) value = v
      else {
        val c = spec.ordering.compare(v, value)
        if (if (spec.isMax) c > 0 else c < 0) value = v
      }
    def add(r: InputRecord): Unit = if (!r.isNullAt(spec.input)) offer(r.get(spec.input))
    def merge(other: AggregatePartial): Unit = { val o = other.asInstanceOf[Acc].value; if (o != null) offer(o) }
    def copy(): AggregatePartial = { val c = new Acc(spec); c.value = value; c }
    def result(): Any = value
    def write(out: ByteWriter): Unit = spec.values.write(out, value)
    def read(in: ByteReader): Unit = value = spec.values.read(in)
  }
}

/**
 * `first(x)` / `last(x)`: the value of the record with the earliest / latest event time in the window, ties going to
 * the earlier / later arrival (a streaming aggregation has no other defined order); with `ignoreNulls`, null values
 * are skipped.
 */
private[sparksuppress] final case class PositionalAggregate(
    name: String,
    input: Int,
    resultType: DataType,
    isLast: Boolean,
    ignoreNulls: Boolean
) extends AggregateColumn {
  def layout: String = s"${if (isLast) "last" else "first"}(${resultType.simpleString},$ignoreNulls)"
  @transient private[spark] lazy val values = new ValueCodec(resultType)
  def newAccumulator(): AggregatePartial = new PositionalAggregate.Acc(this)
}

private[sparksuppress] object PositionalAggregate {
  final class Acc(spec: PositionalAggregate) extends AggregatePartial {
    var set = false
    var value: Any = null
    var ts = 0L
    // Arrival order within the current micro-batch; stored values arrived earlier than all of it.
    var seq = Long.MinValue
    private def offer(v: Any, t: Long, s: Long): Unit = {
      val better = !set || {
        val c = if (t != ts) java.lang.Long.compare(t, ts) else java.lang.Long.compare(s, seq)
        if (spec.isLast) c > 0 else c < 0
      }
      if (better) { set = true; value = v; ts = t; seq = s }
    }
    def add(r: InputRecord): Unit = {
      val isNull = r.isNullAt(spec.input)
      if (!(isNull && spec.ignoreNulls)) offer(if (isNull) null else r.get(spec.input), r.ts, r.seq)
    }
    def merge(other: AggregatePartial): Unit = {
      val o = other.asInstanceOf[Acc]; if (o.set) offer(o.value, o.ts, o.seq)
    }
    def copy(): AggregatePartial = { val c = new Acc(spec); c.set = set; c.value = value; c.ts = ts; c.seq = seq; c }
    def result(): Any = value
    def write(out: ByteWriter): Unit = {
      out.writeByte(if (set) 1 else 0)
      if (set) { out.writeZigZag(ts); out.writeZigZag(seq); spec.values.write(out, value) }
    }
    def read(in: ByteReader): Unit = {
      set = in.readByte() != 0
      if (set) { ts = in.readZigZag(); seq = in.readZigZag(); value = spec.values.read(in) }
    }

    /** Forgets the arrival sequence: once stored, the value arrived before anything a later batch brings. */
    override def settle(): Unit = seq = Long.MinValue
  }
}

/**
 * `latest(value[, order])` ([[LatestArrival]]): Kafka's `reduce((v1, v2) -> v2)`, the latest non-null value to
 * arrive. Every micro-batch arrives after the ones before it, whatever its event times; within one micro-batch the
 * record with the greatest `order` (e.g. a Kafka offset) is the latest, ties and the case without `order` going to
 * the order the key's records reach the operator (a source partition's order). Null values are skipped: Kafka's
 * reduce never sees one. Null orders sort first.
 */
private[sparksuppress] final case class ArrivalAggregate(
    name: String,
    input: Int,
    resultType: DataType,
    order: Option[(Int, DataType)]
) extends AggregateColumn {
  def layout: String = s"latest(${resultType.simpleString},${order.map(_._2.simpleString).getOrElse("arrival")})"
  @transient private[spark] lazy val values = new ValueCodec(resultType)
  @transient private[spark] lazy val orders = order.map { case (_, t) =>
    (new ValueCodec(t), ValueOrdering.forType(t).get)
  }
  def newAccumulator(): AggregatePartial = new ArrivalAggregate.Acc(this)
}

private[sparksuppress] object ArrivalAggregate {

  /** `seq` of a value read back from stored state: it arrived before every record of the running micro-batch. */
  private final val Stored = Long.MinValue

  final class Acc(spec: ArrivalAggregate) extends AggregatePartial {
    var set = false
    var value: Any = null
    var order: Any = null
    var seq = Stored

    private def compareOrders(a: Any, b: Any): Int = spec.orders match {
      case None => 0
      case Some((_, ordering)) =>
        if (a == null || b == null) java.lang.Boolean.compare(a != null, b != null) else ordering.compare(a, b)
    }

    private def offer(v: Any, o: Any, s: Long): Unit = {
      val later = !set || (s != Stored && (seq == Stored || {
        val c = compareOrders(o, order)
        if (c != 0) c > 0 else s >= seq
      }))
      if (later) { set = true; value = v; order = o; seq = s }
    }

    def add(r: InputRecord): Unit = if (!r.isNullAt(spec.input)) {
      val o = spec.order match {
        case Some((i, _)) if !r.isNullAt(i) => r.get(i)
        case _ => null
      }
      offer(r.get(spec.input), o, r.seq)
    }
    def merge(other: AggregatePartial): Unit = {
      val o = other.asInstanceOf[Acc]
      if (o.set) offer(o.value, o.order, o.seq)
    }
    def copy(): AggregatePartial = {
      val c = new Acc(spec); c.set = set; c.value = value; c.order = order; c.seq = seq; c
    }
    def result(): Any = value
    def write(out: ByteWriter): Unit = {
      out.writeByte(if (set) 1 else 0)
      if (set) {
        out.writeZigZag(seq)
        spec.values.write(out, value)
        spec.orders.foreach { case (codec, _) => codec.write(out, order) }
      }
    }
    def read(in: ByteReader): Unit = {
      set = in.readByte() != 0
      if (set) {
        seq = in.readZigZag()
        value = spec.values.read(in)
        order = spec.orders.map { case (codec, _) => codec.read(in) }.orNull
      }
    }

    override def settle(): Unit = seq = Stored
  }
}

/** Exact decimal arithmetic helpers for sum and avg. */
private[spark] object Decimals {
  def of(v: Any): JBigDecimal = v match {
    case b: JBigDecimal => b
    case b: scala.math.BigDecimal => b.bigDecimal
    case d: Decimal => d.toJavaBigDecimal
  }

  /** `v` at the scale of `t`, or `overflow` (evaluated lazily) if it needs more digits than `t` has. */
  def fit(v: JBigDecimal, t: DecimalType, overflow: => Any): Any = {
    val scaled = v.setScale(t.scale, RoundingMode.HALF_UP)
    if (scaled.precision() - scaled.scale() > t.precision - t.scale) overflow else scaled
  }

  def write(out: ByteWriter, v: JBigDecimal): Unit =
    if (v == null) out.writeBytes(null)
    else { out.writeBytes(v.unscaledValue().toByteArray); out.writeZigZag(v.scale().toLong) }

  def read(in: ByteReader): JBigDecimal = {
    val unscaled = in.readBytes()
    if (unscaled == null) null else new JBigDecimal(new java.math.BigInteger(unscaled), in.readZigZag().toInt)
  }
}

/** One external value of a fixed Spark type in compact binary form (null included), via [[RowCodec]]. */
private[spark] final class ValueCodec(t: DataType) {
  private val rows = new RowCodec(StructType(Seq(StructField("v", t))))
  def write(out: ByteWriter, v: Any): Unit = rows.writeRow(out, Row(v))
  def read(in: ByteReader): Any = rows.readRow(in).get(0)
}
