package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Row
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core._
import io.github.sparksuppress.core.chain.{ChainNode, ChainRecord, JoinNode}
import io.github.sparksuppress.spark.common.{EntrySize, OperatorMetricsAccumulator, RowCodec, RowValues}
import io.github.sparksuppress.spark.join.{JoinedRows, JoinMetricsReport, JoinMetricsSampler, JoinSequenceRows}

/**
 * A stream-table join as a chain's first step. It forwards rows shaped as the stand-alone join's output: the stream
 * row's columns, then the table's value columns (null when the table has no value for the key).
 *
 * @param streamKeys
 *   indices of the key columns in `streamSchema` (for the buffered size)
 * @param streamValues
 *   indices of the stream's other columns but the event time (for the size, and null values)
 * @param tablePerKey
 *   a physical choice for a lone join: its table lives in a per-key lookup after the chain
 *   ([[io.github.sparksuppress.spark.join.JoinLookupFunction]]), and the node forwards [[JoinSequenceRows]] to it
 */
final case class JoinNodeSpec(
    operator: String,
    spec: StreamTableJoinSpec,
    streamSchema: StructType,
    tableValueSchema: StructType,
    streamKeys: Array[Int],
    streamValues: Array[Int],
    tablePerKey: Boolean = false
) extends NodeSpec {

  @transient private lazy val streamRows = new RowCodec(streamSchema)
  @transient private lazy val tableRows = new RowCodec(tableValueSchema)

  def newNode(): ChainNode[ChainKey] = newNode(null)

  override def newNode(metrics: OperatorMetricsAccumulator): ChainNode[ChainKey] = new JoinNode[ChainKey](
    spec,
    joiner,
    size,
    if (metrics == null) new StreamTableJoinMetrics else new JoinMetricsSampler(metrics),
    if (tablePerKey) new SequenceRows else null
  )

  private def joiner(stream: AnyRef, table: AnyRef): AnyRef =
    JoinedRows(stream.asInstanceOf[Row], table.asInstanceOf[Row], tableValueSchema.length)

  /** One call's rows for the per-key lookup, numbered in the order the node forwards them. */
  private final class SequenceRows extends JoinNode.Deferred[ChainKey] {
    private var order = 0L
    private def next(): Long = { order += 1; order }
    def tableWrite(key: ChainKey, timestamp: Long, value: AnyRef, tableTime: Long): AnyRef =
      JoinSequenceRows.tableWrite(key.bytes, next(), timestamp, tableTime, value.asInstanceOf[Row])
    def streamRecord(key: ChainKey, timestamp: Long, value: AnyRef, tableTime: Long): AnyRef =
      JoinSequenceRows.streamRecord(
        if (key == null) null else key.bytes,
        next(),
        timestamp,
        tableTime,
        value.asInstanceOf[Row]
      )
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

  /** Nullable rows (a tombstone, a null stream value) through `rows`. */
  private final class Rows(rows: Codec[Row]) extends Codec[AnyRef] {
    def write(out: ByteWriter, v: AnyRef): Unit =
      if (v == null) out.writeByte(0) else { out.writeByte(1); rows.write(out, v.asInstanceOf[Row]) }
    def read(in: ByteReader): AnyRef = if (in.readByte() == 0) null else rows.read(in)
  }

  /**
   * Stream time, table time, the largest stream timestamp seen (dropped records included: it decides the release on
   * the watermark), whether a grace buffer follows (then the stream rows' schema descriptor and the buffer), the
   * table rows' schema descriptor and the shard's tables (none with the table per key). The descriptors let stored
   * rows survive added or dropped columns and refuse a changed type by name.
   */
  def write(n: ChainNode[ChainKey], out: ByteWriter, keys: ChainKeyCodec): Unit = {
    val j = node(n)
    out.writeZigZag(j.streamTime)
    out.writeZigZag(j.sequencer.tableTime.fold(TableStreamTime.None)(_.time))
    out.writeZigZag(j.sequencer.streamSeen)
    j.sequencer.buffer match {
      case Some(b) =>
        out.writeByte(1)
        streamRows.writeDescriptor(out)
        GraceBufferCodec.write(b, out)(new NullableKeys(keys), new Rows(RowValues.writing(streamRows)))
      case None => out.writeByte(0)
    }
    tableRows.writeDescriptor(out)
    out.writeVarLong(j.tables.size().toLong)
    val tableCodec = new Rows(RowValues.writing(tableRows))
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
    if (format >= ChainState.FormatWithJoinDescriptors) {
      j.sequencer.streamSeen = in.readZigZag()
      if (in.readByte() == 1) readBuffer(in, j, keys, RowValues.reading(streamRows.readDescriptor(in)))
      readTables(in, j, keys, RowValues.reading(tableRows.readDescriptor(in)))
    } else {
      // Earlier formats: rows in this schema, and a buffer exactly when the join has a grace period.
      j.sequencer.buffer.foreach(b =>
        GraceBufferCodec.read(in, b)(new NullableKeys(keys), new Rows(RowValues.reading(streamRows.readRow)))
      )
      readTables(in, j, keys, RowValues.reading(tableRows.readRow))
      // Not stored then: the buffer's stream time is the closest (it counts the records the buffer saw).
      j.sequencer.streamSeen = j.sequencer.buffer.fold(TableStreamTime.None)(_.streamTime)
    }
  }

  /** A buffer stored by a join that has no grace period any more is refused rather than dropped: it would be lost. */
  private def readBuffer(in: ByteReader, j: JoinNode[ChainKey], keys: ChainKeyCodec, rows: Codec[Row]): Unit = {
    val into = j.sequencer.buffer.getOrElse(new GraceBuffer[ChainKey, AnyRef](0)(JoinNode.nullsFirst(ChainKey.keyOps)))
    GraceBufferCodec.read(in, into)(new NullableKeys(keys), new Rows(rows))
    if (j.sequencer.buffer.isEmpty && !into.isEmpty) {
      throw new IllegalStateException(
        s"$operator: the checkpoint holds ${into.numRecords} stream records waiting in the grace buffer, but the " +
          "join now has no grace period. Restart with the grace period it had, let the records drain, or start " +
          "from a new checkpoint (they would be lost)."
      )
    }
  }

  private def readTables(in: ByteReader, j: JoinNode[ChainKey], keys: ChainKeyCodec, rows: Codec[Row]): Unit = {
    var i = in.readVarLong()
    val tableCodec = new Rows(rows)
    while (i > 0) {
      val k = keys.read(in)
      j.tables.put(k, TableEntryCodec.read[AnyRef](in, spec)(tableCodec))
      i -= 1
    }
  }

  def isEmpty(n: ChainNode[ChainKey]): Boolean = node(n).tables.isEmpty && node(n).sequencer.buffer.forall(_.isEmpty)

  override def report(n: ChainNode[ChainKey], call: NodeCall): Unit = {
    val sequencer = node(n).sequencer
    // With the table per key, the lookup counts what the join emits.
    if (!tablePerKey) call.metrics.count("emitted", call.forwarded)
    JoinMetricsReport(sequencer.metrics, sequencer.buffer, call.metrics, call.shard)
  }
}
