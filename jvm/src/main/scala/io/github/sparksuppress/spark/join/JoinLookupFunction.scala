package io.github.sparksuppress.spark.join

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow
import org.apache.spark.sql.streaming.GroupState

import io.github.sparksuppress.core.TableEntry
import io.github.sparksuppress.spark.common._

/**
 * The join's second stateful operator, called once per key: it applies the key's table writes and joins its stream
 * records, in the order the sequencer gave them, against the key's [[TableEntry]] as of each record's timestamp.
 * Output rows are the stream row's columns followed by the table's value columns.
 */
private[sparksuppress] final class JoinLookupFunction(p: JoinParams, metrics: OperatorMetricsAccumulator)
    extends ((Array[Byte], Iterator[Row], GroupState[Array[Byte]]) => Iterator[Row]) with Serializable {

  import StreamTableJoinLayout.Out

  @transient private lazy val tableRows = new RowCodec(p.tableValueSchema)
  private val streamWidth = p.streamSchema.length
  private val tableWidth = p.tableValueSchema.length

  override def apply(key: Array[Byte], rows: Iterator[Row], state: GroupState[Array[Byte]]): Iterator[Row] = {
    val entry = state.getOption
      .map(JoinKeyState.read(_, p.spec, p.explicitName, p.operatorName, tableRows))
      .getOrElse(TableEntry[Row](p.spec))
    val batch = rows.toArray
    java.util.Arrays.sort(batch, ByOrder)
    val out = new ArrayBuffer[Row]()
    var changed = false
    batch.foreach { r =>
      val ts = r.getLong(Out.Time)
      val tableTime = r.getLong(Out.TableTime)
      if (r.getInt(Out.Kind) == Out.TableWrite) {
        entry.write(ts, if (r.isNullAt(Out.Table)) null else r.getStruct(Out.Table), tableTime)
        changed = true
      } else {
        val tableValue = entry.lookup(ts, tableTime)
        if (tableValue != null || p.spec.joinType.emitsWithoutTableValue)
          out += joined(r.getStruct(Out.Stream), tableValue)
      }
    }
    if (changed) {
      if (entry.isEmpty) state.remove() else state.update(JoinKeyState.write(entry, p.explicitName, tableRows))
    }
    if (metrics != null) metrics.count("emitted", out.length.toLong)
    out.iterator
  }

  private def joined(stream: Row, table: Row): Row = {
    val values = new Array[Any](streamWidth + tableWidth)
    var i = 0
    while (i < streamWidth) { values(i) = stream.get(i); i += 1 }
    if (table != null) {
      var j = 0
      while (j < tableWidth) { values(streamWidth + j) = table.get(j); j += 1 }
    }
    new GenericRow(values)
  }

  @transient private lazy val ByOrder: java.util.Comparator[Row] =
    (a: Row, b: Row) => java.lang.Long.compare(a.getLong(Out.Order), b.getLong(Out.Order))
}
