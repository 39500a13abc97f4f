package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Row
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core._
import io.github.sparksuppress.core.chain.{ChainNode, ChainRecord, SuppressNode, WindowBounds, WindowedKey}
import io.github.sparksuppress.spark.common.{EntrySize, RowCodec}

/**
 * A suppress in a chain. Its records' values are rows of its input (`inputSchema`); it forwards them unchanged.
 *
 * @param keyColumns
 *   indices of the key columns in `inputSchema` (for the entry size)
 * @param valueColumns
 *   indices of the other columns that count as the value (for the entry size)
 * @param wallClock
 *   the time limit runs on the wall clock (`SuppressionClock.ProcessingTime`, beyond Kafka)
 * @param emitLate
 *   an update for a closed window leaves the chain at once as a late row (beyond Kafka)
 */
final case class SuppressNodeSpec(
    operator: String,
    spec: SuppressionSpec,
    untilWindowCloses: Boolean,
    inputSchema: StructType,
    keyColumns: Array[Int],
    valueColumns: Array[Int],
    sizeModel: EntrySizeModel,
    wallClock: Boolean = false,
    emitLate: Boolean = false
) extends NodeSpec {

  @transient private lazy val rows = new RowCodec(inputSchema)

  def newNode(): ChainNode[ChainKey] = new SuppressNode[ChainKey](spec, untilWindowCloses, size, wallClock, emitLate)

  override def onWallClock: Boolean = wallClock

  private def size(r: ChainRecord[ChainKey]): Long =
    EntrySize.ofEntry(
      sizeModel,
      r.value.asInstanceOf[Row],
      inputSchema,
      keyColumns,
      valueColumns,
      r.window != null,
      r.isTombstone
    )

  def write(node: ChainNode[ChainKey], out: ByteWriter, keys: ChainKeyCodec): Unit = {
    val s = node.asInstanceOf[SuppressNode[ChainKey]]
    out.writeZigZag(s.streamTime)
    SuppressionBufferCodec.write(s.suppressor.buffer, out)(new BufferKeyCodec(keys), new RecordCodec(keys))
  }

  def read(in: ByteReader, node: ChainNode[ChainKey], keys: ChainKeyCodec): Unit = {
    val s = node.asInstanceOf[SuppressNode[ChainKey]]
    s.restore(in.readZigZag())
    SuppressionBufferCodec.read(in, s.suppressor.buffer)(new BufferKeyCodec(keys), new RecordCodec(keys))
  }

  def isEmpty(node: ChainNode[ChainKey]): Boolean = node.asInstanceOf[SuppressNode[ChainKey]].suppressor.buffer.isEmpty

  override def report(node: ChainNode[ChainKey], call: NodeCall): Unit = {
    val buffer = node.asInstanceOf[SuppressNode[ChainKey]].suppressor.buffer
    call.metrics.count("emitted", call.forwarded)
    call.metrics.gauge("buffer-count", call.shard, buffer.numRecords.toLong)
    call.metrics.gauge("buffer-bytes", call.shard, buffer.sizeBytes)
  }

  private final class BufferKeyCodec(keys: ChainKeyCodec) extends Codec[WindowedKey[ChainKey]] {
    def write(out: ByteWriter, k: WindowedKey[ChainKey]): Unit = {
      keys.write(out, k.key)
      ChainRecordParts.writeWindow(out, k.window)
    }
    def read(in: ByteReader): WindowedKey[ChainKey] = WindowedKey(keys.read(in), ChainRecordParts.readWindow(in))
  }

  /** A buffered record: key, window, timestamp, tombstone flag and row. */
  private final class RecordCodec(keys: ChainKeyCodec) extends Codec[ChainRecord[ChainKey]] {
    def write(out: ByteWriter, r: ChainRecord[ChainKey]): Unit = {
      keys.write(out, r.key)
      ChainRecordParts.writeWindow(out, r.window)
      out.writeZigZag(r.timestamp)
      out.writeByte(if (r.tombstone) 1 else 0)
      val row = r.value.asInstanceOf[Row]
      out.writeByte(if (row == null) 0 else 1)
      if (row != null) rows.writeRow(out, row)
    }
    def read(in: ByteReader): ChainRecord[ChainKey] = {
      val key = keys.read(in)
      val window = ChainRecordParts.readWindow(in)
      val ts = in.readZigZag()
      val tombstone = in.readByte() == 1
      val row = if (in.readByte() == 1) rows.readRow(in) else null
      ChainRecord(key, window, row, ts, tombstone)
    }
  }
}

/** Stored pieces shared by the node specs. */
private[chain] object ChainRecordParts {
  def writeWindow(out: ByteWriter, w: WindowBounds): Unit =
    if (w == null) out.writeByte(0)
    else {
      out.writeByte(1)
      out.writeZigZag(w.start)
      out.writeZigZag(w.end)
    }

  def readWindow(in: ByteReader): WindowBounds =
    if (in.readByte() == 0) null else WindowBounds(in.readZigZag(), in.readZigZag())
}
