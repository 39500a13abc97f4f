package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.{Expression, GenericRow}
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core.{ByteReader, ByteWriter}
import io.github.sparksuppress.core.chain.{ChainNode, ChainRecord, TableFilterNode, WindowedKey}
import io.github.sparksuppress.spark.common.FlaggedRows

/**
 * A `where` on a table inside a chain (Kafka's `KTable.filter`): below an aggregation or a suppress. See
 * [[TableFilterNode]] for what it forwards. A tombstone it makes has Kafka's null value: its row keeps the key,
 * window and timestamp columns, the other columns are null, and the deletion flag (when the output has one) is set.
 *
 * @param condition
 *   the user's condition, bound to `inputSchema`
 * @param outputSchema
 *   `inputSchema`, plus a deletion flag at the end when `appendsFlag`
 * @param kept
 *   positions a tombstone keeps (key, window and timestamp columns)
 * @param flag
 *   position of the deletion flag in `outputSchema`, if it has one
 * @param appendsFlag
 *   the flag is this node's (every row gets it); otherwise the input already had it
 * @param withOldValues
 *   see [[TableFilterNode]]
 * @param closedAfterMs
 *   see [[TableFilterNode]]
 */
final case class TableFilterNodeSpec(
    operator: String,
    condition: Expression,
    inputSchema: StructType,
    outputSchema: StructType,
    kept: Array[Int],
    flag: Option[Int],
    appendsFlag: Boolean,
    withOldValues: Boolean,
    closedAfterMs: Option[Long]
) extends NodeSpec {
  private val internal = new RowExpressions.ToInternal(inputSchema)

  private def passes(r: ChainRecord[ChainKey]): Boolean = condition.eval(internal(r.value.asInstanceOf[Row])) == true

  private def passing(r: ChainRecord[ChainKey]): ChainRecord[ChainKey] =
    if (!appendsFlag) r else r.copy(value = FlaggedRows.append(r.value.asInstanceOf[Row], flag = false))

  private def tombstone(r: ChainRecord[ChainKey]): ChainRecord[ChainKey] = {
    val row = r.value.asInstanceOf[Row]
    val values = new Array[Any](outputSchema.length)
    if (row != null) kept.foreach(i => values(i) = row.get(i))
    flag.foreach(i => values(i) = true)
    ChainRecord(r.key, r.window, new GenericRow(values), r.timestamp, tombstone = true)
  }

  def newNode(): ChainNode[ChainKey] =
    new TableFilterNode[ChainKey](passes, passing, withOldValues, tombstone, closedAfterMs)

  private def node(n: ChainNode[ChainKey]) = n.asInstanceOf[TableFilterNode[ChainKey]]

  def write(n: ChainNode[ChainKey], out: ByteWriter, keys: ChainKeyCodec): Unit = {
    val f = node(n)
    f.forgetClosedWindows()
    out.writeZigZag(f.streamTime)
    out.writeVarLong(f.passed.size().toLong)
    f.passed.forEach { k =>
      keys.write(out, k.key)
      ChainRecordParts.writeWindow(out, k.window)
    }
  }

  def read(in: ByteReader, n: ChainNode[ChainKey], keys: ChainKeyCodec, format: Int): Unit = {
    val f = node(n)
    f.restore(in.readZigZag())
    var i = in.readVarLong()
    while (i > 0) {
      f.passed.add(WindowedKey(keys.read(in), ChainRecordParts.readWindow(in)))
      i -= 1
    }
  }

  def isEmpty(n: ChainNode[ChainKey]): Boolean = node(n).passed.isEmpty
}
