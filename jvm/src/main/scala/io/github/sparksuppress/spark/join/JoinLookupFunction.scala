package io.github.sparksuppress.spark.join

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.Row
import org.apache.spark.sql.streaming.GroupState
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core.{StreamTableJoinSpec, TableEntry}
import io.github.sparksuppress.spark.common._

/**
 * What a lone join's per-key lookup needs, built on the driver.
 *
 * @param streamSchema
 *   the stream's columns: the start of the output
 * @param tableValueSchema
 *   the table's value columns: stored per key, and the end of the output
 */
private[sparksuppress] final case class JoinLookupParams(
    operatorName: String,
    explicitName: Option[String],
    spec: StreamTableJoinSpec,
    streamSchema: StructType,
    tableValueSchema: StructType
)

/**
 * A lone join's table, per key (a physical choice under the join's node: a shard's state then holds only the join's
 * clocks and grace buffer, and a micro-batch rewrites only the keys it touches). Called once per key, it applies the
 * key's table writes and joins its stream records in the order the join's node forwarded them ([[JoinSequenceRows]]),
 * against the key's [[TableEntry]] as of each record's timestamp. Output rows are the stream row's columns followed
 * by the table's value columns.
 */
private[sparksuppress] final class JoinLookupFunction(p: JoinLookupParams, metrics: OperatorMetricsAccumulator)
    extends ((Array[Byte], Iterator[Row], GroupState[Array[Byte]]) => Iterator[Row]) with Serializable {

  import JoinSequenceRows._

  @transient private lazy val tableRows = new RowCodec(p.tableValueSchema)
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
      val ts = r.getLong(Time)
      val tableTime = r.getLong(TableTime)
      if (r.getInt(Kind) == TableWrite) {
        entry.write(ts, if (r.isNullAt(Table)) null else r.getStruct(Table), tableTime)
        changed = true
      } else {
        val tableValue = entry.lookup(ts, tableTime)
        if (tableValue != null || p.spec.joinType.emitsWithoutTableValue)
          out += JoinedRows(r.getStruct(Stream), tableValue, tableWidth)
      }
    }
    if (changed) {
      if (entry.isEmpty) state.remove() else state.update(JoinKeyState.write(entry, p.explicitName, tableRows))
    }
    if (metrics != null) metrics.count("emitted", out.length.toLong)
    out.iterator
  }

  @transient private lazy val ByOrder: java.util.Comparator[Row] =
    (a: Row, b: Row) => java.lang.Long.compare(a.getLong(Order), b.getLong(Order))
}
