package io.github.sparksuppress.spark.window

import java.time.{Instant, LocalDateTime, ZoneOffset}

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow
import org.apache.spark.sql.streaming.GroupState

import io.github.sparksuppress.core._
import io.github.sparksuppress.spark.common._

/**
 * The function `flatMapGroupsWithState` calls for each key of a windowed aggregation (and for the group of partition
 * summaries). It only maps rows, time and timers onto the core's [[WindowedAggregator]]:
 *
 *   - stream time is the batch's watermark, advanced by the key's records in arrival order; windows already closed at
 *     the watermark close first (their timer may not have fired, when the key also has data);
 *   - records are applied one by one, or pre-combined partials per input partition, each partition at the stream time
 *     its records start from (see [[TimeWindowPartials]]);
 *   - the key's state is written only when something changed, and one event-time timer waits for the earliest window
 *     that will close;
 *   - with an idle timeout, stream time starts from the larger of the watermark and the key's idle clock; no
 *     event-time timers exist then (one timeout kind per operator), so a key with open windows asks to be called in
 *     every micro-batch, where it sees both the watermark and the wall clock move.
 */
private[sparksuppress] final class WindowAggregateFunction(
    p: WindowAggregateParams,
    metrics: OperatorMetricsAccumulator
) extends ((Row, Iterator[Row], GroupState[Array[Byte]]) => Iterator[Row]) with Serializable {
  import ShuffleRows._

  private val layout = new ShuffleRows(p.keySchema.length)
  import layout._

  @transient private lazy val buffers = new AggregateBuffers(p.aggregates)

  override def apply(key: Row, rows: Iterator[Row], state: GroupState[Array[Byte]]): Iterator[Row] = {
    val watermark = state.getCurrentWatermarkMs()
    val batch = if (state.hasTimedOut) Array.empty[Row] else rows.toArray
    if (batch.nonEmpty && batch(0).getInt(Kind) == PartitionSummary) { // they share one group, of their own
      summarize(batch.iterator, watermark)
      return Iterator.empty
    }
    if (batch.length > 1) java.util.Arrays.sort(batch, BySeq)
    val stored = state.getOption.map(WindowAggregateState.read(_, p, buffers))
    val windows = stored.map(_._1).getOrElse(WindowedAggregator.emptyWindows[AggregateBuffer](p.definition))
    val clock = stored.map(_._2).getOrElse(p.idleTimeoutMs.map(new IdleClock(_)))
    val aggregator = WindowedAggregator(p.definition, p.mode, buffers, windows)
    val sink = new OutputSink(key)
    val nowMs = state.getCurrentProcessingTimeMs()
    val clockBefore = clock.map(_.fields)
    val start = clock.fold(watermark)(_.runAt(watermark, nowMs, decides = !windows.isEmpty || batch.nonEmpty))

    aggregator.closeDue(start, sink)
    var predropped = 0L
    val end =
      if (p.precombine) { val (t, d) = applyPartials(batch, aggregator, start, sink); predropped = d; t }
      else applyRecords(batch, aggregator, start, sink)
    clock.foreach(_.observe(end, nowMs))

    // A key without windows that ran ahead of the watermark keeps its clock, or a later record would find a window
    // open again that the clock has closed.
    val remembers = clock.exists(_.aheadOf(watermark))
    if (windows.isEmpty && !remembers) { if (stored.isDefined) state.remove() }
    else {
      if (aggregator.changed || stored.isEmpty || clock.map(_.fields) != clockBefore) {
        state.update(WindowAggregateState.write(p, windows, buffers, clock))
      }
      val wakeUp = aggregator.nextWakeUp
      clock match {
        // Called in every micro-batch (1 ms: the next one): the watermark or the idle clock may close a window.
        case Some(_) if wakeUp != Long.MaxValue => state.setTimeoutDuration(1L)
        // Called now and then, to forget the clock once the watermark has passed it.
        case Some(c) => state.setTimeoutDuration(c.timeoutMs)
        case None =>
          // Spark fires a timer once timer < watermark; the key needs a call once wakeUp <= stream time. Timers
          // must be positive: the only window due at stream time 1 (time window [0,1), no grace) waits until 2.
          if (wakeUp != Long.MaxValue) state.setTimeoutTimestamp(math.max(1L, wakeUp - 1))
      }
    }
    report(aggregator.metrics, predropped, state)
    sink.out.iterator
  }

  /** Applies the records one by one from stream time `start`; returns the stream time after them. */
  private def applyRecords(
      batch: Array[Row],
      aggregator: WindowedAggregator[InputRecord, AggregateBuffer],
      start: Long,
      sink: OutputSink
  ): Long = {
    val record = new RowInputRecord
    record.offset = Inputs
    var streamTime = start
    var i = 0
    while (i < batch.length) {
      val row = batch(i)
      val ts = row.getLong(Ts)
      if (ts > streamTime) streamTime = ts
      aggregator.closeDue(streamTime, sink)
      addRecord(aggregator, record, row, ts, row.getLong(Arrival), streamTime, sink)
      i += 1
    }
    streamTime
  }

  /**
   * Applies each input partition's partials at the stream time before that partition's records, from stream time
   * `start`, and records a partition passed on uncombined one by one after its partials (each row of those has an
   * arrival sequence of its own); returns the stream time after them and the records the map side dropped.
   */
  private def applyPartials(
      batch: Array[Row],
      aggregator: WindowedAggregator[InputRecord, AggregateBuffer],
      start: Long,
      sink: OutputSink
  ): (Long, Long) = {
    val time = aggregator.asInstanceOf[TimeWindowAggregator[InputRecord, AggregateBuffer]]
    val record = new RowInputRecord
    record.offset = Inputs
    var before = start // stream time before the current partition's records
    var after = start
    var partition = Long.MinValue
    var dropped = 0L
    var i = 0
    while (i < batch.length) {
      val row = batch(i)
      val seq = row.getLong(Arrival)
      if (seq != partition) { partition = seq; before = after }
      dropped += row.getLong(KeyDropped)
      after = math.max(after, row.getLong(KeyMax))
      row.getInt(Kind) match {
        case KeySummary =>
        case Record => // its partition stopped combining: applied alone, at the stream time including it
          val ts = row.getLong(Ts)
          after = math.max(after, ts)
          addRecord(aggregator, record, row, ts, seq, after, sink)
        case kind @ (Partial | SlicePartial) =>
          val partial = buffers.partialCodec.read(new ByteReader(row.getAs[Array[Byte]](Blob)))
          time.addPartial(row.getLong(Start), kind == SlicePartial, partial, row.getLong(Ts), row.getLong(N), before)
        case other => throw new IllegalStateException(s"${p.operatorName}: unexpected row kind $other")
      }
      i += 1
    }
    aggregator.closeDue(after, sink)
    (after, dropped)
  }

  /** One input row into the aggregator at stream time `streamTime`, through `holder`, which a batch reuses. */
  private def addRecord(
      aggregator: WindowedAggregator[InputRecord, AggregateBuffer],
      holder: RowInputRecord,
      row: Row,
      ts: Long,
      seq: Long,
      streamTime: Long,
      sink: OutputSink
  ): Unit = {
    holder.row = row
    holder.ts = ts
    holder.seq = seq
    aggregator.add(holder, ts, streamTime, sink)
  }

  /** The partition summaries: Kafka's lateness of every record, at this batch's stream time, and map-side drops. */
  private def summarize(rows: Iterator[Row], watermark: Long): Unit = if (metrics != null) {
    rows.foreach { row =>
      val in = new ByteReader(row.getAs[Array[Byte]](Blob))
      val lateness = LatenessSketch.read(in).evaluate(watermark)
      metrics.count("lateness-records", lateness.records)
      metrics.count("lateness-total", lateness.total)
      if (lateness.records > 0) metrics.max("lateness-max", lateness.max)
      metrics.count("dropped", in.readVarLong() + in.readVarLong())
    }
  }

  private def report(m: WindowAggregationMetrics, predropped: Long, state: GroupState[Array[Byte]]): Unit =
    if (metrics != null) {
      metrics.count("dropped", m.dropped + predropped)
      if (m.emittedFinal > 0) {
        // A window could be emitted once the batch's stream time reached its close time: at the latest when the
        // micro-batch started.
        val latency = math.max(0L, System.currentTimeMillis() - state.getCurrentProcessingTimeMs())
        metrics.count("emitted-final", m.emittedFinal)
        metrics.count("emit-latency-total", latency * m.emittedFinal)
        metrics.max("emit-latency-max", latency)
      }
    }

  private final class OutputSink(keyValues: Row) extends WindowSink[AggregateBuffer] {
    val out = new ArrayBuffer[Row]()
    def result(start: Long, end: Long, timestamp: Long, buffer: AggregateBuffer): Unit =
      out += row(start, end, timestamp, buffer, false)
    def retraction(start: Long, end: Long, timestamp: Long, buffer: AggregateBuffer): Unit =
      out += row(start, end, timestamp, buffer, true)
    override def takesLate: Boolean = p.emitLate
    override def late(start: Long, end: Long, timestamp: Long, buffer: AggregateBuffer): Unit =
      out += row(start, end, timestamp, buffer, retraction = false, late = true)

    private def row(
        start: Long,
        end: Long,
        timestamp: Long,
        buffer: AggregateBuffer,
        retraction: Boolean,
        late: Boolean = false
    ): Row = {
      val keys = keyValues.length
      val extra = (if (p.retractions) 1 else 0) + (if (p.emitLate) 1 else 0)
      val values = new Array[Any](keys + 2 + p.aggregates.length + extra)
      var i = 0
      while (i < keys) { values(i) = p.outputKey(keyValues, i); i += 1 }
      values(keys) = new GenericRow(Array[Any](time(start), time(p.outputEnd(end))))
      var a = 0
      while (a < p.aggregates.length) { values(keys + 1 + a) = buffer.parts(a).result(); a += 1 }
      values(keys + 1 + a) = time(timestamp)
      if (p.retractions) values(keys + 2 + a) = retraction
      if (p.emitLate) values(keys + 1 + a + extra) = late
      new GenericRow(values)
    }
  }

  private def time(ms: Long): Any =
    if (p.timestampNtz) LocalDateTime.ofInstant(Instant.ofEpochMilli(ms), ZoneOffset.UTC)
    else new java.sql.Timestamp(ms)

  @transient private lazy val BySeq: java.util.Comparator[Row] =
    (a: Row, b: Row) => java.lang.Long.compare(a.getLong(Arrival), b.getLong(Arrival))
}
