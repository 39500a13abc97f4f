package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.{Expression, GenericInternalRow}
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core.{ByteReader, ByteWriter}
import io.github.sparksuppress.core.chain.{ChainNode, ChainRecord, MapValuesNode}

/**
 * A `select`/`withColumn` inside a chain (Kafka's `mapValues`): each row becomes the user's columns, evaluated by
 * Spark on the row; the key, window, timestamp and deletion columns pass through unchanged (checked on the driver).
 *
 * @param columns
 *   the user's columns, bound to `inputSchema`
 */
final case class MapValuesNodeSpec(
    operator: String,
    columns: Array[Expression],
    inputSchema: StructType,
    outputSchema: StructType
) extends NodeSpec {
  private val internal = new RowExpressions.ToInternal(inputSchema)
  private val external = new RowExpressions.ToExternal(outputSchema)

  private def map(r: ChainRecord[ChainKey]): AnyRef = if (r.value == null) null
  else {
    val in = internal(r.value.asInstanceOf[Row])
    val out = new GenericInternalRow(columns.length)
    var i = 0
    while (i < columns.length) { out.update(i, columns(i).eval(in)); i += 1 }
    external(out)
  }

  def newNode(): ChainNode[ChainKey] = new MapValuesNode[ChainKey](map)

  def write(node: ChainNode[ChainKey], out: ByteWriter, keys: ChainKeyCodec): Unit = ()

  def read(in: ByteReader, node: ChainNode[ChainKey], keys: ChainKeyCodec, format: Int): Unit = ()

  def isEmpty(node: ChainNode[ChainKey]): Boolean = true
}
