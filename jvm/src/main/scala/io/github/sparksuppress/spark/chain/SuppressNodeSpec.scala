package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Row
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core._
import io.github.sparksuppress.core.chain.{ChainNode, ChainRecord, SuppressNode, WindowBounds, WindowedKey}
import io.github.sparksuppress.spark.common.{EntrySize, OperatorMetricsAccumulator, RowCodec}

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
 * @param samplesBuffer
 *   the buffer is sampled into the metrics at every put, as Kafka samples it (when the chain's state holds all keys
 *   of a shard: a key's buffer alone is not the operator's)
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
    emitLate: Boolean = false,
    samplesBuffer: Boolean = true
) extends NodeSpec {

  @transient private lazy val rows = new RowCodec(inputSchema)

  def newNode(): ChainNode[ChainKey] = newNode(null)

  override def newNode(metrics: OperatorMetricsAccumulator): ChainNode[ChainKey] = {
    val samples = if (metrics != null && samplesBuffer) new BufferSampler(metrics) else new SuppressionMetrics
    new SuppressNode[ChainKey](spec, untilWindowCloses, size, wallClock, emitLate, samples)
  }

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

  /**
   * Stream time, then (from format 3: with the rows' schema descriptor, so that rows survive added or dropped
   * columns) the buffer.
   */
  def write(node: ChainNode[ChainKey], out: ByteWriter, keys: ChainKeyCodec): Unit = {
    val s = node.asInstanceOf[SuppressNode[ChainKey]]
    out.writeZigZag(s.streamTime)
    rows.writeDescriptor(out)
    SuppressionBufferCodec.write(s.suppressor.buffer, out)(new BufferKeyCodec(keys), new RecordCodec(keys, null))
  }

  def read(in: ByteReader, node: ChainNode[ChainKey], keys: ChainKeyCodec, format: Int): Unit = {
    val s = node.asInstanceOf[SuppressNode[ChainKey]]
    s.restore(in.readZigZag())
    val reader = if (format >= ChainState.FormatWithDescriptors) rows.readDescriptor(in) else rows.readRow _
    SuppressionBufferCodec.read(in, s.suppressor.buffer)(new BufferKeyCodec(keys), new RecordCodec(keys, reader))
  }

  def isEmpty(node: ChainNode[ChainKey]): Boolean = buffer(node).isEmpty

  private def buffer(node: ChainNode[ChainKey]) = node.asInstanceOf[SuppressNode[ChainKey]].suppressor.buffer

  override def report(node: ChainNode[ChainKey], call: NodeCall): Unit = call.metrics.count("emitted", call.forwarded)

  override def gauges(node: ChainNode[ChainKey]): Seq[(String, Long)] =
    Seq("buffer-count" -> buffer(node).numRecords.toLong, "buffer-bytes" -> buffer(node).sizeBytes)

  override def opened(node: ChainNode[ChainKey]): Unit =
    if (samplesBuffer) node.asInstanceOf[SuppressNode[ChainKey]].suppressor.sample()

  private final class BufferKeyCodec(keys: ChainKeyCodec) extends Codec[WindowedKey[ChainKey]] {
    def write(out: ByteWriter, k: WindowedKey[ChainKey]): Unit = {
      keys.write(out, k.key)
      ChainRecordParts.writeWindow(out, k.window)
    }
    def read(in: ByteReader): WindowedKey[ChainKey] = WindowedKey(keys.read(in), ChainRecordParts.readWindow(in))
  }

  /** A buffered record: key, window, timestamp, tombstone flag and row. */
  private final class RecordCodec(keys: ChainKeyCodec, readRow: ByteReader => Row)
      extends Codec[ChainRecord[ChainKey]] {
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
      val row = if (in.readByte() == 1) readRow(in) else null
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

/**
 * Forwards the core's samples of a buffer (at every put and eviction) to its operator's metrics, as Kafka samples.
 */
private final class BufferSampler(acc: OperatorMetricsAccumulator) extends SuppressionMetrics {
  override def sample(numRecords: Long, sizeBytes: Long): Unit = {
    super.sample(numRecords, sizeBytes)
    acc.sample("buffer-count", numRecords.toDouble)
    acc.sample("buffer-bytes", sizeBytes.toDouble)
    acc.max("buffer-count", numRecords)
    acc.max("buffer-bytes", sizeBytes)
  }
}
