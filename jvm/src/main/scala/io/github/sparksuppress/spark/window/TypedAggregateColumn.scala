package io.github.sparksuppress.spark.window

import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.encoders.{encoderFor, ExpressionEncoder}
import org.apache.spark.sql.catalyst.expressions.{GenericRow, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.expressions.Aggregator
import org.apache.spark.sql.types.{DataType, StructType}

import io.github.sparksuppress.core.{ByteReader, ByteWriter}
import io.github.sparksuppress.spark.common._

/**
 * A typed `org.apache.spark.sql.expressions.Aggregator`, passed as `functions.udaf(aggregator)(columns...)`. It is
 * applied as Kafka applies its aggregators: record by record in arrival order (`reduce` for a record,
 * `merge(zero, ...)` folds for session merges), never pre-combined, because an Aggregator need not be a monoid
 * (Kafka's test aggregators are not). Buffers are stored as the aggregator's buffer encoder writes them.
 *
 * @param inputs
 *   positions of the aggregator's arguments among the evaluated aggregate inputs
 * @param inputSchema
 *   their types (after the casts Spark's analyzer added)
 */
private[sparksuppress] final case class TypedAggregateColumn(
    name: String,
    inputs: Array[Int],
    inputSchema: StructType,
    aggregator: Aggregator[Any, Any, Any],
    inputEncoder: ExpressionEncoder[Any],
    bufferEncoder: ExpressionEncoder[Any],
    resultType: DataType
) extends AggregateColumn {

  def layout: String = s"typed(${aggregator.getClass.getName},${bufferEncoder.schema.simpleString})"

  @transient private lazy val toCatalyst = CatalystTypeConverters.createToCatalystConverter(inputSchema)
  @transient private lazy val deserializeInput = inputEncoder.resolveAndBind().createDeserializer()
  @transient private lazy val serializeBuffer = bufferEncoder.createSerializer()
  @transient private lazy val bufferToUnsafe = UnsafeProjection.create(bufferEncoder.schema)
  @transient private lazy val deserializeBuffer = bufferEncoder.resolveAndBind().createDeserializer()
  @transient private lazy val outputEncoder: ExpressionEncoder[Any] = encoderFor(aggregator.outputEncoder)
  @transient private lazy val serializeOutput = outputEncoder.createSerializer()
  @transient private lazy val toScala = CatalystTypeConverters.createToScalaConverter(resultType)

  private[spark] def input(record: InputRecord): Any = {
    val values = new Array[Any](inputs.length)
    var i = 0
    while (i < inputs.length) { values(i) = record.get(inputs(i)); i += 1 }
    deserializeInput(toCatalyst(new GenericRow(values)).asInstanceOf[InternalRow])
  }

  private[spark] def bufferBytes(buffer: Any): Array[Byte] = bufferToUnsafe(serializeBuffer(buffer)).getBytes

  private[spark] def bufferFrom(bytes: Array[Byte]): Any = {
    val row = new UnsafeRow(bufferEncoder.schema.length)
    row.pointTo(bytes, bytes.length)
    deserializeBuffer(row)
  }

  private[spark] def output(buffer: Any): Any = {
    val row = serializeOutput(aggregator.finish(buffer))
    toScala(if (outputEncoder.isSerializedAsStructForTopLevel) row else row.get(0, resultType))
  }

  def newAccumulator(): AggregatePartial = new TypedAggregateColumn.Acc(this, aggregator.zero)
}

private[sparksuppress] object TypedAggregateColumn {
  final class Acc(spec: TypedAggregateColumn, var buffer: Any) extends AggregatePartial {
    def add(r: InputRecord): Unit = buffer = spec.aggregator.reduce(buffer, spec.input(r))
    def merge(other: AggregatePartial): Unit = buffer = spec.aggregator.merge(buffer, other.asInstanceOf[Acc].buffer)
    // Aggregators may mutate their buffers, so a copy goes through the buffer's stored form.
    def copy(): AggregatePartial = new Acc(spec, spec.bufferFrom(spec.bufferBytes(buffer)))
    def result(): Any = spec.output(buffer)
    def write(out: ByteWriter): Unit = out.writeBytes(spec.bufferBytes(buffer))
    def read(in: ByteReader): Unit = buffer = spec.bufferFrom(in.readBytes())
  }
}
