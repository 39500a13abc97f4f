package io.github.sparksuppress.spark.window

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{
  Expression,
  GenericInternalRow,
  Generator,
  UnsafeProjection,
  UnsafeRow
}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.types._

import io.github.sparksuppress.compat.IterableOnce
import io.github.sparksuppress.core._
import io.github.sparksuppress.spark.common._

/**
 * The map side of a lone windowed aggregation, run on each input partition before the shuffle (stateless within the
 * micro-batch): a physical choice under the aggregation's chain node, which then receives evaluated inputs and, for
 * time windows with final results, partials instead of records. Its children are `key columns (as the input has
 * them)..., event time (epoch ms, or a TIMESTAMP_NTZ value in microseconds), aggregate inputs...`; it emits
 * [[ShuffleRows]].
 *
 * It is a Catalyst generator, not a `mapPartitions` function, because it sees Spark's internal rows: a record that is
 * combined costs a lookup of its key ([[KeyTable]]) and an accumulator update, and is never converted to an external
 * `Row` (that conversion, and the one back, cost more than the combining in a `Row`-based map side). The combined
 * partials leave in `terminate`, which Spark calls once the partition's records are consumed.
 *
 * Records without a key (all key columns null) or without a usable event time (null, or before the epoch, where
 * Kafka's windows do not reach) are dropped and counted here. Every record with an event time feeds the partition's
 * [[LatenessSketch]] (Kafka measures lateness before a record reaches the aggregation). Then either each record
 * travels on (sliding and session windows, updates, typed aggregators, late rows), or, when combining, each key's
 * records are combined per time window, or per slice of hopping windows ([[TimeWindowPartials]]), and only partials
 * travel on.
 *
 * Combining pays only when keys repeat within a partition. After `combineCheck` records, a partition that has seen
 * more than half as many keys as records stops combining: its later records travel on alone (a hash map of nearly
 * every key, and a partial per record, would cost more than they save). They arrive after the partition's partials,
 * which hold its earlier records, and the state operator applies them one by one.
 */
private[sparksuppress] final case class WindowAggregateMapSide(children: Seq[Expression], p: MapSideParams)
    extends Generator with CodegenFallback {
  import ShuffleRows._

  private def keys = p.keySchema.length
  private def inputOffset = keys + 1

  override def elementSchema: StructType = ShuffleRows.schema(p.keySchema, p.inputSchema)

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): WindowAggregateMapSide =
    copy(children = newChildren)

  // One per task: Spark deserializes a task's plan, this expression included, for each task it runs.
  @transient private[this] var task: MapSideTask = _

  override def eval(input: InternalRow): IterableOnce[InternalRow] = {
    if (task == null) task = new MapSideTask
    task.offer(input)
  }

  override def terminate(): IterableOnce[InternalRow] =
    if (task == null) Nil else { val t = task; task = null; t.finish() }

  private final class MapSideTask {
    private val layout = new ShuffleRows(keys)
    private val width = layout.Inputs + p.inputSchema.length
    private val base = ArrivalSequence.partitionBase()
    private val columns = new InternalColumns(children)
    private var position = 0L
    private val lateness = new LatenessSketch()
    private val rule = InputRule.WindowedAggregation
    private var unkeyed = 0L
    private var untimed = 0L

    // Each key and its partials per time window. A key is its columns as an UnsafeRow, compared by content and
    // hashed whatever the key's types; a key of one string column is its bytes, compared as the row would compare
    // them, since building the row costs more than the rest of a lookup.
    private val buffers = if (p.combines) new AggregateBuffers(p.aggregates) else null
    private val stringKey = keys == 1 && p.keySchema.head.dataType.isInstanceOf[StringType]
    private val keyRow = if (p.combines && !stringKey) UnsafeProjection.create(children.take(keys)) else null
    private val keyView = new UnsafeRow(keys)
    private val byKey = if (p.combines) new KeyTable[TimeWindowPartials[InputRecord, AggregateBuffer]](1024) else null
    private val record =
      if (p.combines)
        new InternalInputRecord(children.slice(inputOffset, inputOffset + p.inputSchema.length), p.inputSchema)
      else null

    /**
     * The record's event time in ms, or Long.MinValue (counted) when the aggregation's rule drops it for its key or
     * its event time ([[InputRule.WindowedAggregation]]).
     */
    private def eventTime(row: InternalRow): Long = {
      position += 1
      val ts = columns.getLong(row, keys, Long.MinValue)
      val isNull = ts == Long.MinValue
      val ms = if (isNull || !p.timestampNtz) ts else Math.floorDiv(ts, 1000L)
      if (rule.dropsTime(isNull, ms)) { untimed += 1; return Long.MinValue }
      lateness.add(ms)
      var nulls = 0
      var k = 0
      while (k < keys) { if (columns.isNullAt(row, k)) nulls += 1; k += 1 }
      if (rule.isNullKey(nulls, keys)) { unkeyed += 1; Long.MinValue }
      else ms
    }

    private var combining = p.combines
    private var combined = 0

    def offer(row: InternalRow): IterableOnce[InternalRow] = {
      val ts = eventTime(row)
      if (ts == Long.MinValue) Nil
      else if (combining) {
        combine(row, ts)
        combined += 1
        if (combined == p.combineCheck && byKey.size.toLong * 2 > combined) combining = false
        Nil
      } else {
        val values = new Array[Any](width)
        var k = 0
        while (k < keys) { values(k) = columns.get(row, k); k += 1 }
        fill(values, base + position, Record, ts, 0L, 0L, null, Long.MinValue, 0L)
        var i = 0
        while (i < p.inputSchema.length) { values(layout.Inputs + i) = columns.get(row, inputOffset + i); i += 1 }
        Iterator.single(new GenericInternalRow(values))
      }
    }

    private def combine(row: InternalRow, ts: Long): Unit = {
      // The rule has dropped records without a key: a lone key column is not null here.
      val text = if (stringKey) columns.getUTF8String(row, 0) else null
      val key = if (stringKey) null else keyRow(row)
      val entry = if (stringKey) byKey.find(text) else byKey.find(key)
      val partials =
        if (entry >= 0) byKey.value(entry)
        else {
          val fresh = new TimeWindowPartials[InputRecord, AggregateBuffer](
            p.definition.asInstanceOf[TimeWindowDefinition],
            buffers
          )
          if (stringKey) byKey.add(text, fresh) else byKey.add(key, fresh)
          fresh
        }
      record.row = row
      record.ts = ts
      record.seq = base + position
      partials.add(record, ts)
    }

    def finish(): IterableOnce[InternalRow] = {
      val out = new ArrayBuffer[InternalRow](if (byKey == null) 1 else byKey.size * 2 + 1)
      var entry = 0
      while (byKey != null && entry < byKey.size) {
        val partials = byKey.value(entry)
        val windows = partials.result
        if (windows.isEmpty) out += keyed(entry, KeySummary, 0L, 0L, 0L, null, partials.maxTs, partials.dropped)
        var w = 0
        while (w < windows.length) {
          val partial = windows(w)
          val blob = new ByteWriter(32)
          buffers.partialCodec.write(blob, partial.buffer)
          val kind = if (partial.slice) SlicePartial else Partial
          // Only a key's first row carries its partition-wide figures, so that they count once.
          out += (if (w == 0) keyed(
                    entry,
                    kind,
                    partial.maxTs,
                    partial.start,
                    partial.records,
                    blob.toByteArray,
                    partials.maxTs,
                    partials.dropped
                  )
                  else keyed(
                    entry,
                    kind,
                    partial.maxTs,
                    partial.start,
                    partial.records,
                    blob.toByteArray,
                    Long.MinValue,
                    0L
                  ))
          w += 1
        }
        entry += 1
      }
      if (position > 0) {
        val summary = new ByteWriter(64)
        lateness.write(summary)
        summary.writeVarLong(unkeyed)
        summary.writeVarLong(untimed)
        val values = new Array[Any](width)
        fill(values, base, PartitionSummary, 0L, 0L, 0L, summary.toByteArray, Long.MinValue, 0L)
        out += new GenericInternalRow(values)
      }
      out
    }

    /** A row of the key of the table's `entry`. */
    private def keyed(
        entry: Int,
        kind: Int,
        ts: Long,
        start: Long,
        n: Long,
        blob: Array[Byte],
        keyMax: Long,
        keyDropped: Long
    ): InternalRow = {
      val values = new Array[Any](width)
      // Views of the table's bytes, which no record changes once the partition is read.
      if (stringKey) values(0) = byKey.stringKey(entry)
      else {
        byKey.key(entry, keyView)
        var k = 0
        while (k < keys) {
          values(k) = if (keyView.isNullAt(k)) null else keyView.get(k, p.keySchema(k).dataType)
          k += 1
        }
      }
      fill(values, base, kind, ts, start, n, blob, keyMax, keyDropped)
      new GenericInternalRow(values)
    }

    private def fill(
        values: Array[Any],
        seq: Long,
        kind: Int,
        ts: Long,
        start: Long,
        n: Long,
        blob: Array[Byte],
        keyMax: Long,
        keyDropped: Long
    ): Unit = {
      values(layout.Arrival) = seq; values(layout.Kind) = kind; values(layout.Ts) = ts; values(layout.Start) = start
      values(layout.N) = n; values(layout.Blob) = blob; values(layout.KeyMax) = keyMax;
      // The largest valid event time so far, keyed or not: the sketch has seen every one (ShuffleRows).
      values(layout.KeyDropped) = keyDropped; values(layout.Horizon) = lateness.maxTimestamp
    }

  }
}
