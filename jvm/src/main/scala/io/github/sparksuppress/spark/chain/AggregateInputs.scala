package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.encoders.{ExpressionEncoder, RowEncoder}
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core.chain.ChainRecord
import io.github.sparksuppress.spark.window.{AggregateBuffers, AggregateColumn, InputRecord, InternalInputRecord}

/**
 * An aggregation node's view of its records. Inside a chain a node's input rows are made on the executor (by the node
 * before it), so the aggregates' argument expressions (the `amount * 2` of `sum(amount * 2)`), bound to the node's
 * input schema on the driver, are evaluated here, per record, instead of as columns before the shuffle.
 *
 * @param inputs
 *   the aggregates' argument expressions, bound to `rowSchema`
 * @param inputsSchema
 *   their types
 */
final class AggregateInputs(
    val aggregates: Array[AggregateColumn],
    inputs: Array[Expression],
    val inputsSchema: StructType,
    rowSchema: StructType
) extends Serializable {

  @transient lazy val buffers = new AggregateBuffers(aggregates)
  @transient private lazy val toInternal =
    ExpressionEncoder(RowEncoder.encoderFor(rowSchema, lenient = true)).createSerializer()
  @transient private lazy val record = new InternalInputRecord(inputs.toSeq, inputsSchema)
  // Orders records of one call for first/last; stored buffers forget it (see Accumulator.settle).
  @transient private var arrival = 0L

  /** The record as the aggregates read it; valid until the next call. */
  def valueOf(r: ChainRecord[ChainKey]): InputRecord = r.value match {
    case evaluated: InputRecord => evaluated // its inputs were evaluated before the shuffle (the map side)
    case row =>
      record.row = toInternal(row.asInstanceOf[Row])
      record.ts = r.timestamp
      arrival += 1
      record.seq = arrival
      record
  }
}
