package io.github.sparksuppress.spark

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.TaskContext
import org.apache.spark.sql.Row

import io.github.sparksuppress.core._

/**
 * The map side of a windowed aggregation, run on each input partition before the shuffle (stateless within the
 * micro-batch). Input rows are `key columns..., event time, aggregate inputs...`.
 *
 * Records without a key (all key columns null) or without a usable event time (null, or before the epoch,
 * where Kafka's windows do not reach) are dropped and counted here. Every record with an event time feeds the
 * partition's [[LatenessSketch]] (Kafka measures lateness before a record reaches the aggregation). Then either
 * each record travels on (sliding and session windows, updates, typed aggregators), or, when pre-combining,
 * each key's records are combined per time window ([[TimeWindowPartials]]) and only partials travel on.
 */
final class WindowAggregateMapSide(p: WindowAggregateParams) extends (Iterator[Row] => Iterator[Row]) with Serializable {
  import ShuffleRows._

  private val keys = p.keySchema.length
  private val tsColumn = keys
  private val inputOffset = keys + 1
  private val inputs = p.inputSchema.length
  private val width = Inputs + inputs

  @transient private lazy val keyEncoder = KeyEncoding.encoder(p.keySchema)
  @transient private lazy val buffers = new AggregateBuffers(p.aggregates)

  override def apply(rows: Iterator[Row]): Iterator[Row] = {
    val partition = Option(TaskContext.get()).map(_.partitionId().toLong).getOrElse(0L)
    val base = partition << 33
    val task = new TaskState(base)
    if (p.precombine) combine(rows, task) else records(rows, task)
  }

  private final class TaskState(val base: Long) {
    var position = 0L
    val lateness = new LatenessSketch()
    var unkeyed = 0L
    var untimed = 0L

    /** The record's event time in ms, or Long.MinValue (counted) when it has none that windows can use. */
    def eventTime(row: Row): Long = {
      position += 1
      if (row.isNullAt(tsColumn)) { untimed += 1; return Long.MinValue }
      val ts = SparkTime.millis(row.get(tsColumn))
      if (ts < 0) { untimed += 1; return Long.MinValue }
      lateness.add(ts)
      var k = 0
      while (k < keys && row.isNullAt(k)) k += 1
      if (k == keys) { unkeyed += 1; Long.MinValue } else ts
    }

    def summary: Iterator[Row] =
      if (position == 0) Iterator.empty
      else {
        val out = new ByteWriter(64)
        lateness.write(out)
        out.writeVarLong(unkeyed)
        out.writeVarLong(untimed)
        Iterator.single(shuffleRow(Array.emptyByteArray, base, PartitionSummary, 0L, 0L, 0L, out.toByteArray, null, null))
      }
  }

  private def keyValues(row: Row): Row = {
    val values = new Array[Any](keys)
    var i = 0
    while (i < keys) { values(i) = row.get(i); i += 1 }
    Row.fromSeq(scala.collection.immutable.ArraySeq.unsafeWrapArray(values))
  }

  private def shuffleRow(group: Array[Byte], seq: Long, kind: Int, ts: Long, start: Long, n: Long, blob: Array[Byte],
      key: Row, inputsFrom: Row): Row = {
    val values = new Array[Any](width)
    values(Group) = group; values(Arrival) = seq; values(Kind) = kind; values(Ts) = ts; values(Start) = start
    values(N) = n; values(Blob) = blob; values(Key) = key
    if (inputsFrom != null) {
      var i = 0
      while (i < inputs) { values(Inputs + i) = inputsFrom.get(inputOffset + i); i += 1 }
    }
    Row.fromSeq(scala.collection.immutable.ArraySeq.unsafeWrapArray(values))
  }

  private def records(rows: Iterator[Row], task: TaskState): Iterator[Row] =
    rows.flatMap { row =>
      val ts = task.eventTime(row)
      if (ts == Long.MinValue) None
      else Some(shuffleRow(keyEncoder.encode(row), task.base + task.position, Record, ts, 0L, 0L, null, keyValues(row), row))
    } ++ task.summary

  private def combine(rows: Iterator[Row], task: TaskState): Iterator[Row] = {
    val definition = p.definition.asInstanceOf[TimeWindowDefinition]
    val byKey = new java.util.LinkedHashMap[WindowAggregateMapSide.KeyBytes, (Row, TimeWindowPartials[InputRecord, AggregateBuffer])]()
    val record = new InputRecord
    record.offset = inputOffset
    rows.foreach { row =>
      val ts = task.eventTime(row)
      if (ts != Long.MinValue) {
        val key = new WindowAggregateMapSide.KeyBytes(keyEncoder.encode(row))
        var entry = byKey.get(key)
        if (entry == null) {
          entry = (keyValues(row), new TimeWindowPartials[InputRecord, AggregateBuffer](definition, buffers))
          byKey.put(key, entry)
        }
        record.row = row
        record.ts = ts
        record.seq = task.base + task.position
        entry._2.add(record, ts)
      }
    }
    val out = new ArrayBuffer[Row]()
    byKey.forEach { (key, entry) =>
      val (values, partials) = entry
      out += shuffleRow(key.bytes, task.base, KeySummary, partials.maxTs, 0L, partials.dropped, null, values, null)
      partials.result.foreach { w =>
        val blob = new ByteWriter(32)
        buffers.partialCodec.write(blob, w.buffer)
        out += shuffleRow(key.bytes, task.base, Partial, w.maxTs, w.start, w.records, blob.toByteArray, null, null)
      }
    }
    out.iterator ++ task.summary
  }
}

object WindowAggregateMapSide {
  /** Key bytes with content equality, for hash maps. */
  final class KeyBytes(val bytes: Array[Byte]) {
    override val hashCode: Int = java.util.Arrays.hashCode(bytes)
    override def equals(o: Any): Boolean = o match {
      case k: KeyBytes => java.util.Arrays.equals(bytes, k.bytes)
      case _ => false
    }
  }
}
