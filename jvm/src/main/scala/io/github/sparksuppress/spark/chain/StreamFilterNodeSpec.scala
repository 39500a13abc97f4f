package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core.{ByteReader, ByteWriter}
import io.github.sparksuppress.core.chain.{ChainNode, ChainRecord, StreamFilterNode}

/**
 * A `where` on a stream inside a chain (Kafka's `KStream.filter`): below a join, whose output is a stream. Records
 * that fail are dropped; it keeps no state beyond its clock.
 *
 * @param condition
 *   the user's condition, bound to `inputSchema`
 */
final case class StreamFilterNodeSpec(operator: String, condition: Expression, inputSchema: StructType)
    extends NodeSpec {
  private val internal = new RowExpressions.ToInternal(inputSchema)

  private def passes(r: ChainRecord[ChainKey]): Boolean = condition.eval(internal(r.value.asInstanceOf[Row])) == true

  def newNode(): ChainNode[ChainKey] = new StreamFilterNode[ChainKey](passes)

  def write(node: ChainNode[ChainKey], out: ByteWriter, keys: ChainKeyCodec): Unit = ()

  def read(in: ByteReader, node: ChainNode[ChainKey], keys: ChainKeyCodec, format: Int): Unit = ()

  def isEmpty(node: ChainNode[ChainKey]): Boolean = true
}
