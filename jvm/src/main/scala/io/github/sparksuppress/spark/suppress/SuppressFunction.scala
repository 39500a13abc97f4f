package io.github.sparksuppress.spark.suppress

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow
import org.apache.spark.sql.streaming.GroupState
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core._
import io.github.sparksuppress.spark.common._

/**
 * Everything the executors need to run one suppress operator; built and checked on the driver.
 *
 * @param inputSchema
 *   the user's columns (watermark markers removed), which are buffered and emitted
 * @param keyColumns
 *   indices of the key columns in `inputSchema`
 * @param valueColumns
 *   indices of the columns whose size counts as the value's
 * @param window
 *   where the window's bounds are, for windowed input
 * @param windowEndIsBufferTime
 *   true for `untilWindowCloses` (buffer time = window end)
 * @param emitLate
 *   (untilWindowCloses) an update whose window has closed leaves at once with `late = true`; the output has the
 *   user's columns and `late`
 * @param idleTimeoutMs
 *   (event-time clock) each group's stream time runs on with the wall clock once it stood still this long
 *   ([[IdleClock]]); the operator then has processing-time timeouts
 */
private[sparksuppress] final case class SuppressParams(
    operatorName: String,
    explicitName: Option[String],
    spec: SuppressionSpec,
    clock: SuppressionClock,
    inputSchema: StructType,
    timestampColumn: Int,
    keyColumns: Array[Int],
    valueColumns: Array[Int],
    window: Option[WindowBounds],
    windowEndIsBufferTime: Boolean,
    tombstoneColumn: Option[Int],
    sizeModel: EntrySizeModel,
    sharded: Boolean,
    epoch: Long,
    emitLate: Boolean = false,
    idleTimeoutMs: Option[Long] = None
)

/**
 * The function `flatMapGroupsWithState` calls for each group: one key (unbounded buffers) or one shard (bounded
 * ones). Stream time is the watermark of this batch, advanced by the group's records in arrival order; entries
 * already due at the watermark leave first, then each record is buffered as Kafka's processor would buffer it.
 *
 * With an idle timeout, the batch's stream time starts from the larger of the watermark and the group's idle clock.
 * Event-time timers do not exist then (one timeout kind per operator), so a group holding records asks to be called
 * in every micro-batch, where it sees both the watermark and the wall clock move.
 */
private[sparksuppress] final class SuppressFunction(p: SuppressParams, metrics: OperatorMetricsAccumulator)
    extends ((Array[Byte], Iterator[Row], GroupState[Array[Byte]]) => Iterator[Row]) with Serializable {

  import SuppressFunction._
  require(p.epoch != NoEpoch)

  @transient private lazy val rowCodec = new RowCodec(p.inputSchema)
  private val layout = SuppressLayout(p.inputSchema)
  private val n = p.inputSchema.length

  override def apply(group: Array[Byte], rows: Iterator[Row], state: GroupState[Array[Byte]]): Iterator[Row] = {
    val samples = if (p.sharded && metrics != null) new AccumulatorSampler(metrics) else new SuppressionMetrics
    val suppressor = new Suppressor[Array[Byte], Row](p.spec, isTombstone, samples)(KeyOps.bytes)
    val buffer = suppressor.buffer
    val (restoredEpoch, idleClock) = state.getOption match {
      case Some(bytes) => SuppressState.read(bytes, buffer, p.explicitName, p.operatorName, rowCodec, p.idleTimeoutMs)
      case None => (NoEpoch, p.idleTimeoutMs.map(new IdleClock(_)))
    }
    val batch = if (state.hasTimedOut) Array.empty[Row] else rows.toArray
    val watermark = if (p.clock == SuppressionClock.EventTime) state.getCurrentWatermarkMs() else Long.MinValue
    val now = (p.clock, idleClock) match {
      case (SuppressionClock.ProcessingTime, _) => state.getCurrentProcessingTimeMs()
      case (_, None) => watermark
      case (_, Some(c)) =>
        c.runAt(watermark, state.getCurrentProcessingTimeMs(), decides = !buffer.isEmpty || batch.nonEmpty)
    }
    // Kafka samples a buffer when it is opened: here, the first time this run sees the shard.
    if (p.sharded && restoredEpoch != p.epoch) suppressor.sample()
    // Entries restored from an earlier run of the query are counted in this run's gauges when first seen.
    val (countBefore, bytesBefore) =
      if (restoredEpoch == p.epoch) (buffer.numRecords.toLong, buffer.sizeBytes) else (0L, 0L)

    val out = new ArrayBuffer[Row]()
    val emitter = new SuppressionEmitter[Array[Byte], Row] {
      def emit(record: BufferedRecord[Array[Byte], Row]): Unit =
        out += (if (p.emitLate) FlaggedRows.append(record.value, flag = false) else record.value)
    }

    suppressor.evictExpired(now, emitter)
    var streamTime = now
    if (batch.nonEmpty) {
      if (batch.length > 1) java.util.Arrays.sort(batch, BySeq)
      var i = 0
      while (i < batch.length) {
        val row = batch(i)
        val ts = eventMillis(row)
        val bufferTime = p.clock match {
          case SuppressionClock.ProcessingTime => now
          case SuppressionClock.EventTime =>
            if (ts > streamTime) streamTime = ts
            if (p.windowEndIsBufferTime) windowEnd(row) else ts
        }
        val payload = userColumns(row)
        // Kafka would buffer an update for a closed window and let it out at once, like a final result; flagged,
        // it leaves instead of being buffered, after whatever became due with it.
        if (p.emitLate && bufferTime <= TimeMath.minus(streamTime, p.spec.timeLimitMs)) {
          suppressor.evictExpired(streamTime, emitter)
          out += FlaggedRows.append(payload, flag = true)
        } else suppressor.put(
          row.getAs[Array[Byte]](layout.Key),
          payload,
          ts,
          bufferTime,
          size(payload),
          streamTime,
          emitter
        )
        i += 1
      }
    }
    idleClock.foreach(_.observe(streamTime, state.getCurrentProcessingTimeMs()))

    // An empty shard keeps its (tiny) state so that it is not counted as newly opened again; an empty group that ran
    // ahead of the watermark keeps its clock, or a later update would find its window open again.
    val remembers = idleClock.exists(_.aheadOf(watermark))
    if (buffer.isEmpty && !p.sharded && !remembers) state.remove()
    else {
      state.update(SuppressState.write(buffer, p.explicitName, p.epoch, rowCodec, idleClock))
      val due = suppressor.nextDueStreamTime
      (p.clock, idleClock) match {
        // Called in every micro-batch (1 ms: the next one): the watermark or the idle clock may make an entry due.
        case (_, Some(_)) if due != Long.MaxValue => state.setTimeoutDuration(1L)
        // Called now and then, to forget the clock once the watermark has passed it.
        case (_, Some(c)) => if (remembers && !p.sharded) state.setTimeoutDuration(c.timeoutMs)
        case _ if due == Long.MaxValue =>
        // Spark fires a timeout once timeout < watermark; the entry is due once due <= stream time. Spark refuses
        // timeouts <= 0: an entry due at exactly 1 ms after the epoch leaves once the watermark passes 1 ms.
        case (SuppressionClock.EventTime, _) => state.setTimeoutTimestamp(math.max(1L, due - 1))
        case (SuppressionClock.ProcessingTime, _) => state.setTimeoutDuration(math.max(1L, due - 1 - now))
      }
    }

    if (metrics != null) {
      metrics.count("emitted", suppressor.metrics.emitTotal)
      if (p.sharded) {
        val shard = java.util.Arrays.hashCode(group)
        metrics.gauge("buffer-count", shard, buffer.numRecords.toLong)
        metrics.gauge("buffer-bytes", shard, buffer.sizeBytes)
      } else {
        metrics.gaugeDelta("buffer-count", buffer.numRecords - countBefore)
        metrics.gaugeDelta("buffer-bytes", buffer.sizeBytes - bytesBefore)
      }
    }
    out.iterator
  }

  private val isTombstone: Row => Boolean = p.tombstoneColumn match {
    case Some(c) => r => !r.isNullAt(c) && r.getBoolean(c)
    case None => _ => false
  }

  private def eventMillis(row: Row): Long = {
    if (row.isNullAt(p.timestampColumn)) {
      throw new IllegalStateException(
        s"${p.operatorName}: the event-time column '${p.inputSchema.fields(p.timestampColumn).name}' is null in an " +
          "input row; every row needs an event time. Filter such rows out (or fill them) before the operator."
      )
    }
    val ms = WindowBounds.millis(row.get(p.timestampColumn))
    // Spark's watermark never goes below 0, so stream time could not follow such records (Kafka refuses negative
    // timestamps at its source too).
    if (ms < 0 && p.clock == SuppressionClock.EventTime) {
      throw new IllegalStateException(
        s"${p.operatorName}: an input row has the event time ${row.get(p.timestampColumn)} (before 1970-01-01), " +
          s"in column '${p.inputSchema.fields(p.timestampColumn).name}'. Spark's event-time watermark never goes " +
          "below 1970-01-01, so suppress cannot keep time for such records. Filter them out, or shift the event " +
          "times of the whole stream to after 1970 before the operator."
      )
    }
    ms
  }

  private def windowEnd(row: Row): Long = p.window.get.end(row, p.operatorName)

  private def userColumns(row: Row): Row = {
    val values = new Array[Any](n)
    var i = 0
    while (i < n) { values(i) = row.get(i); i += 1 }
    new GenericRow(values)
  }

  private def size(payload: Row): Long =
    EntrySize.ofEntry(
      p.sizeModel,
      payload,
      p.inputSchema,
      p.keyColumns,
      p.valueColumns,
      p.window.isDefined,
      isTombstone(payload)
    )

  @transient private lazy val BySeq: java.util.Comparator[Row] =
    (a: Row, b: Row) => java.lang.Long.compare(a.getLong(layout.Seq), b.getLong(layout.Seq))
}

/** Forwards the core's per-put and per-eviction samples to the operator's accumulator (Kafka's sampling). */
private final class AccumulatorSampler(acc: OperatorMetricsAccumulator) extends SuppressionMetrics {
  override def sample(numRecords: Long, sizeBytes: Long): Unit = {
    super.sample(numRecords, sizeBytes)
    acc.sample("buffer-count", numRecords.toDouble)
    acc.sample("buffer-bytes", sizeBytes.toDouble)
    acc.max("buffer-count", numRecords)
    acc.max("buffer-bytes", sizeBytes)
  }
}

private[sparksuppress] object SuppressFunction {
  private val NoEpoch = Long.MinValue
}
