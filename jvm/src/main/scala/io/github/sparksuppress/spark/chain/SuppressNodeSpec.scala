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
   * Stream time, the rows' schema descriptor (so that buffered rows survive added or dropped columns), then the
   * buffer, whose records are stored without what their entry already holds (key, window, timestamp).
   */
  def write(node: ChainNode[ChainKey], out: ByteWriter, keys: ChainKeyCodec): Unit = {
    val s = node.asInstanceOf[SuppressNode[ChainKey]]
    out.writeZigZag(s.streamTime)
    rows.writeDescriptor(out)
    val entries = new Entries(keys, null)
    SuppressionBufferCodec.write(s.suppressor.buffer, out)(entries.Keys, entries.Records)
  }

  def read(in: ByteReader, node: ChainNode[ChainKey], keys: ChainKeyCodec, format: Int): Unit = {
    val s = node.asInstanceOf[SuppressNode[ChainKey]]
    s.restore(in.readZigZag())
    if (format >= ChainState.FormatWithDescriptors) {
      val entries = new Entries(keys, rows.readDescriptor(in))
      SuppressionBufferCodec.read(in, s.suppressor.buffer)(entries.Keys, entries.Records)
    } else {
      SuppressionBufferCodec.read(in, s.suppressor.buffer)(new BufferKeyCodec(keys), new FullRecordCodec(keys))
    }
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

  /**
   * A buffer's entries (format 3): the key and window once, in the entry's key; the record adds its timestamp,
   * tombstone flag and row. The buffer's codec reads each entry's key just before its record, which takes key and
   * window from it.
   */
  private final class Entries(keys: ChainKeyCodec, readRow: ByteReader => Row) {
    private var lastKey: WindowedKey[ChainKey] = _

    object Keys extends Codec[WindowedKey[ChainKey]] {
      private val codec = new BufferKeyCodec(keys)
      def write(out: ByteWriter, k: WindowedKey[ChainKey]): Unit = codec.write(out, k)
      def read(in: ByteReader): WindowedKey[ChainKey] = { lastKey = codec.read(in); lastKey }
    }

    object Records extends Codec[ChainRecord[ChainKey]] {
      def write(out: ByteWriter, r: ChainRecord[ChainKey]): Unit = {
        out.writeZigZag(r.timestamp)
        RecordParts.writeFlagAndRow(out, r)
      }
      def read(in: ByteReader): ChainRecord[ChainKey] = {
        val ts = in.readZigZag()
        val (tombstone, row) = RecordParts.readFlagAndRow(in, readRow)
        ChainRecord(lastKey.key, lastKey.window, row, ts, tombstone)
      }
    }
  }

  /** A buffered record as formats 1 and 2 stored it: key, window, timestamp, tombstone flag and row. */
  private final class FullRecordCodec(keys: ChainKeyCodec) extends Codec[ChainRecord[ChainKey]] {
    def write(out: ByteWriter, r: ChainRecord[ChainKey]): Unit =
      throw new IllegalStateException("records are written in format 3")
    def read(in: ByteReader): ChainRecord[ChainKey] = {
      val key = keys.read(in)
      val window = ChainRecordParts.readWindow(in)
      val ts = in.readZigZag()
      val (tombstone, row) = RecordParts.readFlagAndRow(in, rows.readRow)
      ChainRecord(key, window, row, ts, tombstone)
    }
  }

  private object RecordParts {
    def writeFlagAndRow(out: ByteWriter, r: ChainRecord[ChainKey]): Unit = {
      out.writeByte(if (r.tombstone) 1 else 0)
      val row = r.value.asInstanceOf[Row]
      out.writeByte(if (row == null) 0 else 1)
      if (row != null) rows.writeRow(out, row)
    }
    def readFlagAndRow(in: ByteReader, readRow: ByteReader => Row): (Boolean, Row) = {
      val tombstone = in.readByte() == 1
      (tombstone, if (in.readByte() == 1) readRow(in) else null)
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
