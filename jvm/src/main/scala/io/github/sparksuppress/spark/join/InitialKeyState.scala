package io.github.sparksuppress.spark.join

import org.apache.spark.sql.Row
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core._
import io.github.sparksuppress.spark.common._

/**
 * Builds one key's initial table state, for a lone join's per-key lookup, from the key's initial versions applied in
 * timestamp order. Rows with Kafka's null key (`InputRule.Keyed`) are dropped and counted, as the changelog's are.
 *
 * @param keyValues
 *   position of the key's values (a struct) in the rows
 * @param time
 *   position of the event time (epoch milliseconds)
 * @param deleted
 *   position of the tombstone flag
 * @param value
 *   position of the table's value columns (a struct)
 */
private[sparksuppress] final class InitialKeyState(
    spec: StreamTableJoinSpec,
    explicitName: Option[String],
    values: StructType,
    operator: String,
    metrics: OperatorMetricsAccumulator,
    keyValues: Int,
    time: Int,
    deleted: Int,
    value: Int
) extends ((Array[Byte], Iterator[Row]) => Iterator[(Array[Byte], Array[Byte])]) with Serializable {

  @transient private lazy val rows = new RowCodec(values)

  override def apply(key: Array[Byte], versions: Iterator[Row]): Iterator[(Array[Byte], Array[Byte])] = {
    val all = versions.toArray
    val k = all.head.getStruct(keyValues)
    if (InputRule.Keyed.isNullKey((0 until k.length).count(k.isNullAt), k.length)) {
      if (metrics != null) metrics.count("dropped-null-table-key", all.length.toLong)
      Iterator.empty
    } else {
      if (all.exists(_.isNullAt(time))) throw InitialVersionColumns.nullTimestamp(operator)
      val entry = TableEntry[Row](spec)
      all.sortBy(_.getLong(time)).foreach { r =>
        val gone = !r.isNullAt(deleted) && r.getBoolean(deleted)
        entry.write(r.getLong(time), if (gone) null else r.getStruct(value), TableStreamTime.None)
      }
      Iterator.single((key, JoinKeyState.write(entry, explicitName, rows)))
    }
  }
}
