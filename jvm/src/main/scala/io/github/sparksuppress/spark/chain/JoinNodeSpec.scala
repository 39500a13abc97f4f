package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core._
import io.github.sparksuppress.core.chain.{ChainNode, ChainRecord, JoinNode}
import io.github.sparksuppress.spark.common.{EntrySize, RowCodec}
import io.github.sparksuppress.spark.join.JoinMetricsReport

/**
 * A stream-table join as a chain's first step. It forwards rows shaped as the stand-alone join's output: the stream
 * row's columns, then the table's value columns (null when the table has no value for the key).
 *
 * @param streamKeys
 *   indices of the key columns in `streamSchema` (for the buffered size)
 * @param streamValues
 *   indices of the stream's other columns but the event time (for the size, and null values)
 */
final case class JoinNodeSpec(
    operator: String,
    spec: StreamTableJoinSpec,
    streamSchema: StructType,
    tableValueSchema: StructType,
    streamKeys: Array[Int],
    streamValues: Array[Int]
) extends NodeSpec {

  @transient private lazy val streamRows = new RowCodec(streamSchema)
  @transient private lazy val tableRows = new RowCodec(tableValueSchema)

  def newNode(): ChainNode[ChainKey] = new JoinNode[ChainKey](spec, joiner, size)

  private def joiner(stream: AnyRef, table: AnyRef): AnyRef = {
    val s = stream.asInstanceOf[Row]
    val t = table.asInstanceOf[Row]
    val values = new Array[Any](s.length + tableValueSchema.length)
    var i = 0
    while (i < s.length) { values(i) = s.get(i); i += 1 }
    if (t != null) {
      var j = 0
      while (j < t.length) { values(i + j) = t.get(j); j += 1 }
    }
    new GenericRow(values)
  }

  private def size(r: ChainRecord[ChainKey]): Long = {
    val row = r.value.asInstanceOf[Row]
    EntrySize.FixedOverhead + EntrySize.ofColumns(row, streamSchema, streamKeys) + EntrySize.ofColumns(
      row,
      streamSchema,
      streamValues
    )
  }

  /** Kafka drops a stream record whose value is null: here, one whose value columns are all null. */
  def valueIsNull(row: Row): Boolean = streamValues.nonEmpty && streamValues.forall(row.isNullAt)

  private def node(n: ChainNode[ChainKey]) = n.asInstanceOf[JoinNode[ChainKey]]

  private final class NullableKeys(keys: ChainKeyCodec) extends Codec[ChainKey] {
    def write(out: ByteWriter, k: ChainKey): Unit =
      if (k == null) out.writeByte(0) else { out.writeByte(1); keys.write(out, k) }
    def read(in: ByteReader): ChainKey = if (in.readByte() == 0) null else keys.read(in)
  }

  private final class Rows(rows: => RowCodec) extends Codec[AnyRef] {
    def write(out: ByteWriter, v: AnyRef): Unit =
      if (v == null) out.writeByte(0) else { out.writeByte(1); rows.writeRow(out, v.asInstanceOf[Row]) }
    def read(in: ByteReader): AnyRef = if (in.readByte() == 0) null else rows.readRow(in)
  }

  def write(n: ChainNode[ChainKey], out: ByteWriter, keys: ChainKeyCodec): Unit = {
    val j = node(n)
    out.writeZigZag(j.streamTime)
    out.writeZigZag(j.sequencer.tableTime.fold(TableStreamTime.None)(_.time))
    j.sequencer.buffer.foreach(b => GraceBufferCodec.write(b, out)(new NullableKeys(keys), new Rows(streamRows)))
    out.writeVarLong(j.tables.size().toLong)
    val tableCodec = new Rows(tableRows)
    j.tables.forEach { (k, e) =>
      keys.write(out, k)
      TableEntryCodec.write(e, out)(tableCodec)
    }
  }

  def read(in: ByteReader, n: ChainNode[ChainKey], keys: ChainKeyCodec, format: Int): Unit = {
    val j = node(n)
    j.restore(in.readZigZag())
    val tableTime = in.readZigZag()
    j.sequencer.tableTime.foreach(_.advanceTo(tableTime))
    j.sequencer.buffer.foreach(b => GraceBufferCodec.read(in, b)(new NullableKeys(keys), new Rows(streamRows)))
    var i = in.readVarLong()
    val tableCodec = new Rows(tableRows)
    while (i > 0) {
      val k = keys.read(in)
      j.tables.put(k, TableEntryCodec.read[AnyRef](in, spec)(tableCodec))
      i -= 1
    }
  }

  def isEmpty(n: ChainNode[ChainKey]): Boolean = node(n).tables.isEmpty && node(n).sequencer.buffer.forall(_.isEmpty)

  override def report(n: ChainNode[ChainKey], call: NodeCall): Unit = {
    val sequencer = node(n).sequencer
    call.metrics.count("emitted", call.forwarded)
    JoinMetricsReport(sequencer.metrics, sequencer.buffer, call.metrics, call.shard)
  }
}
