package io.github.sparksuppress.spark.join

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.Row
import org.apache.spark.sql.streaming.GroupState
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core._
import io.github.sparksuppress.spark.common._

/**
 * Everything the executors need to run one stream-table join; built and checked on the driver.
 *
 * @param streamSchema
 *   the stream's columns (watermark markers removed): buffered, and the start of the output
 * @param tableValueSchema
 *   the table's value columns: stored per key, and the end of the output
 * @param streamKeyColumns
 *   indices of the key columns in `streamSchema` (for the buffered size)
 * @param streamValueColumns
 *   indices of the stream's other columns but the event time (for the buffered size)
 * @param releaseByWatermark
 *   the join has a grace period and the stream a watermark: buffered records also leave once it passes them, and
 *   every shard is called in each micro-batch ([[ShardHeartbeats]])
 * @param idleTimeoutMs
 *   (with the release on the watermark) a quiet shard releases at its [[IdleClock]]'s time; a shard holding records
 *   is then called in every micro-batch, with input or not
 */
private[sparksuppress] final case class JoinParams(
    operatorName: String,
    explicitName: Option[String],
    spec: StreamTableJoinSpec,
    streamSchema: StructType,
    tableValueSchema: StructType,
    streamKeyColumns: Array[Int],
    streamValueColumns: Array[Int],
    releaseByWatermark: Boolean = false,
    idleTimeoutMs: Option[Long] = None
)

/**
 * The join's first stateful operator, called once per shard: it runs the shard's [[StreamTableSequencer]] over the
 * micro-batch (table writes first, then stream records, each side in arrival order) and emits, numbered in order, the
 * accepted table writes and the stream records to join now. The table side's operator ([[JoinLookupFunction]])
 * applies them per key in that order.
 */
private[sparksuppress] final class JoinSequenceFunction(p: JoinParams, metrics: OperatorMetricsAccumulator)
    extends ((Array[Byte], Iterator[Row], GroupState[Array[Byte]]) => Iterator[Row]) with Serializable {

  import StreamTableJoinLayout._

  @transient private lazy val streamRows = new RowCodec(p.streamSchema)

  override def apply(shard: Array[Byte], rows: Iterator[Row], state: GroupState[Array[Byte]]): Iterator[Row] = {
    val counts = if (metrics == null) new StreamTableJoinMetrics else new JoinMetricsSampler(metrics)
    val sequencer = new StreamTableSequencer[Array[Byte], Row, Row](p.spec, counts)(KeyOps.bytes)
    val clock = state.getOption match {
      case Some(bytes) =>
        JoinShardState.read(bytes, sequencer, p.explicitName, p.operatorName, streamRows, p.idleTimeoutMs)
      case None => p.idleTimeoutMs.map(new IdleClock(_))
    }
    val clockBefore = clock.map(_.fields)

    val out = new ArrayBuffer[Row]()
    val sink = new JoinSequence[Array[Byte], Row, Row] {
      def tableWrite(key: Array[Byte], timestamp: Long, value: Row, tableTime: Long): Unit =
        out += Row(key, out.length.toLong, Out.TableWrite, timestamp, tableTime, null, value)
      def streamRecord(key: Array[Byte], timestamp: Long, value: Row, tableTime: Long): Unit =
        out += Row(key, out.length.toLong, Out.StreamRecord, timestamp, tableTime, value, null)
    }

    // The watermark is the previous micro-batch's: what it releases goes before this batch's records, as
    // Kafka would have released it before processing them.
    val batch = rows.filter(_.getInt(In.Side) != Heartbeat).toArray
    val nowMs = state.getCurrentProcessingTimeMs()
    if (p.releaseByWatermark) {
      val watermark = state.getCurrentWatermarkMs()
      // The shard's own stream records are stream time too: idle means neither they nor the watermark moved.
      val time = clock.fold(watermark)(_.runAt(
        math.max(watermark, sequencer.streamSeen),
        nowMs,
        decides = sequencer.buffer.exists(!_.isEmpty) || batch.nonEmpty
      ))
      sequencer.release(time, sink)
    }

    val released = out.length
    java.util.Arrays.sort(batch, BySideThenArrival)
    batch.foreach { row =>
      val key = row.getAs[Array[Byte]](In.Key)
      val keyIsNull = row.getBoolean(In.KeyNull)
      val ts = eventTime(row)
      if (row.getInt(In.Side) == TableSide) {
        val deleted = !row.isNullAt(In.Tombstone) && row.getBoolean(In.Tombstone)
        sequencer.table(key, keyIsNull, ts, if (deleted) null else row.getStruct(In.Table), sink)
      } else {
        val value = row.getStruct(In.Stream)
        sequencer.stream(key, keyIsNull, row.getBoolean(In.ValueNull), ts, value, size(value), sink)
      }
    }

    // A non-versioned join without grace period has nothing to remember across batches; a heartbeat that released
    // nothing changed nothing.
    clock.foreach(_.observe(sequencer.streamSeen, nowMs))
    if (
      (sequencer.tableTime.isDefined || sequencer.buffer.isDefined) &&
      (batch.nonEmpty || released > 0 || clock.map(_.fields) != clockBefore)
    ) {
      state.update(JoinShardState.write(sequencer, p.explicitName, streamRows, clock))
    }
    // Called in every micro-batch (1 ms: the next one) while records wait: the idle clock may release them.
    if (clock.isDefined && sequencer.buffer.exists(!_.isEmpty)) state.setTimeoutDuration(1L)
    if (metrics != null) JoinMetricsReport(counts, sequencer.buffer, metrics, java.util.Arrays.hashCode(shard))
    out.iterator
  }

  private def eventTime(row: Row): Long = {
    if (row.isNullAt(In.Time)) {
      val side = if (row.getInt(In.Side) == TableSide) "table" else "stream"
      throw new IllegalStateException(
        s"${p.operatorName}: a $side row has a null event time; every row needs one. Filter such rows out (or " +
          "fill them) before the join."
      )
    }
    row.getLong(In.Time)
  }

  /** Kafka's estimate, as suppress counts it: a fixed overhead plus the key and value columns' serialized sizes. */
  private def size(value: Row): Long =
    EntrySize.FixedOverhead + EntrySize.ofColumns(value, p.streamSchema, p.streamKeyColumns) +
      EntrySize.ofColumns(value, p.streamSchema, p.streamValueColumns)

  @transient private lazy val BySideThenArrival: java.util.Comparator[Row] = (a: Row, b: Row) => {
    val c = Integer.compare(a.getInt(In.Side), b.getInt(In.Side))
    if (c != 0) c else java.lang.Long.compare(a.getLong(In.Seq), b.getLong(In.Seq))
  }
}

/** Forwards the core's grace-buffer samples to the operator's accumulator. */
private final class JoinMetricsSampler(acc: OperatorMetricsAccumulator) extends StreamTableJoinMetrics {
  override def sampleBuffer(numRecords: Long, sizeBytes: Long): Unit = {
    acc.sample("grace-buffer-count", numRecords.toDouble)
    acc.sample("grace-buffer-bytes", sizeBytes.toDouble)
    acc.max("grace-buffer-count", numRecords)
    acc.max("grace-buffer-bytes", sizeBytes)
  }
}
