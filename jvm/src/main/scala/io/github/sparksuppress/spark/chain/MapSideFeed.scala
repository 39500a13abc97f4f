package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Row

import io.github.sparksuppress.core.{ByteReader, LatenessSketch}
import io.github.sparksuppress.core.chain.{Chain, ChainOutput, ChainRecord, WindowedAggregateNode}
import io.github.sparksuppress.spark.common.OperatorMetricsAccumulator
import io.github.sparksuppress.spark.window.{
  AggregateBuffer, AggregateBuffers, InputRecord, RowInputRecord, ShuffleRows
}

/**
 * Feeds one key's rows to the aggregation node, as the map side left them, in arrival order: a record (with its
 * evaluated inputs) is processed at the stream time including it; where the map side combined, each input partition's
 * partials merge at the stream time before that partition's records; then the windows due at the stream time after
 * all of them close, or, where [[io.github.sparksuppress.spark.window.EarlyClose]] applies, at the batch's horizon
 * less the watermark delay. The partition summaries (every record's lateness, the drops of records without a key or
 * event time) come in a group of their own and only count into the operator's metrics.
 */
private[chain] final class MapSideFeed(spec: WindowedAggregateNodeSpec) extends Serializable {
  import ShuffleRows._

  private val rows = new ShuffleRows(spec.mapSide.get.keySchema.length)
  private val closeDelay = spec.mapSide.get.closeDelayMs
  @transient private lazy val buffers: AggregateBuffers = spec.inputs.buffers

  /** True for the group of partition summaries. */
  def summaries(batch: Array[Row]): Boolean = batch.nonEmpty && batch(0).getInt(rows.Kind) == PartitionSummary

  /** The partition summaries: Kafka's lateness of every record, at this batch's stream time, and map-side drops. */
  def summarize(batch: Array[Row], watermark: Long, metrics: OperatorMetricsAccumulator): Unit =
    if (metrics != null) batch.foreach { row =>
      val in = new ByteReader(row.getAs[Array[Byte]](rows.Blob))
      val lateness = LatenessSketch.read(in).evaluate(watermark)
      metrics.count("lateness-records", lateness.records)
      metrics.count("lateness-total", lateness.total)
      if (lateness.records > 0) metrics.max("lateness-max", lateness.max)
      metrics.count("dropped", in.readVarLong() + in.readVarLong())
    }

  /**
   * Feeds one key's rows (the rows of `key`, as the state is per key) to the chain's only node, from its stream time.
   */
  def feed(
      batch: Array[Row],
      key: ChainKey,
      chain: Chain[ChainKey],
      sink: ChainOutput[ChainKey],
      metrics: OperatorMetricsAccumulator
  ): Unit = if (batch.nonEmpty) {
    java.util.Arrays.sort(batch, ByArrival)
    val node = chain.nodes.head.asInstanceOf[WindowedAggregateNode[ChainKey, InputRecord, AggregateBuffer]]
    var before = node.streamTime // stream time before the current partition's records
    var after = before
    var partition = Long.MinValue
    var dropped = 0L
    var horizon = Long.MinValue
    val record = new RowInputRecord // one per call: the node reads it before the next record
    record.offset = rows.Inputs
    var i = 0
    while (i < batch.length) {
      val row = batch(i)
      val seq = row.getLong(rows.Arrival)
      if (seq != partition) { partition = seq; before = after }
      dropped += row.getLong(rows.KeyDropped)
      horizon = math.max(horizon, row.getLong(rows.Horizon))
      after = math.max(after, row.getLong(rows.KeyMax))
      row.getInt(rows.Kind) match {
        case KeySummary =>
        case Record =>
          val ts = row.getLong(rows.Ts)
          after = math.max(after, ts)
          chain.advance(after, sink)
          record.row = row
          record.ts = ts
          record.seq = seq
          chain.process(ChainRecord(key, null, record, ts, tombstone = false), sink)
        case kind @ (Partial | SlicePartial) =>
          val partial = buffers.partialCodec.read(new ByteReader(row.getAs[Array[Byte]](rows.Blob)))
          node.addPartial(
            key,
            row.getLong(rows.Start),
            kind == SlicePartial,
            partial,
            row.getLong(rows.Ts),
            row.getLong(rows.N),
            before
          )
        case other => throw new IllegalStateException(s"${spec.operator}: unexpected row kind $other")
      }
      i += 1
    }
    // The next watermark is at least the horizon less the delay (EarlyClose): what it would close closes now.
    val closing = closeDelay match {
      case Some(delay) if horizon != Long.MinValue => math.max(after, horizon - delay)
      case _ => after
    }
    chain.advance(closing, sink)
    if (metrics != null) metrics.count("dropped", dropped)
  }

  @transient private lazy val ByArrival: java.util.Comparator[Row] =
    (a: Row, b: Row) => java.lang.Long.compare(a.getLong(rows.Arrival), b.getLong(rows.Arrival))
}
