package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Row

import io.github.sparksuppress.core.chain.{ChainOutput, ChainRecord, JoinNode}
import io.github.sparksuppress.spark.join.InitialVersionColumns

/**
 * One shard's initial chain state from the initial versions of the table its first node (a join) reads: the versions
 * of the shard's keys written into the join's table in timestamp order, as the changelog's would be, and every other
 * node empty. Rows with a null key are dropped and counted, as the changelog's are.
 *
 * @param key
 *   position of the key's bytes in the rows
 * @param values
 *   position of the key's values
 * @param time
 *   position of the event time (epoch milliseconds)
 * @param deleted
 *   position of the tombstone flag
 * @param value
 *   position of the table's value columns (a struct)
 */
private[chain] final class ChainInitialState(p: ChainParams, key: Int, values: Int, time: Int, deleted: Int, value: Int)
    extends ((Array[Byte], Iterator[Row]) => (Array[Byte], Array[Byte]))
    with Serializable {

  override def apply(shard: Array[Byte], rows: Iterator[Row]): (Array[Byte], Array[Byte]) = {
    val nodes = p.nodes.map(_.newNode())
    val join = nodes.head.asInstanceOf[JoinNode[ChainKey]]
    // Nothing waits in the grace buffer yet, so a table write forwards nothing.
    val nowhere = new ChainOutput[ChainKey] { def forward(r: ChainRecord[ChainKey]): Unit = () }
    val all = rows.toArray
    if (all.exists(_.isNullAt(time))) throw InitialVersionColumns.nullTimestamp(p.operator)
    all.sortBy(_.getLong(time)).foreach { r =>
      val k = ChainKey.orNull(r.getAs[Array[Byte]](key), r.getStruct(values))
      val gone = !r.isNullAt(deleted) && r.getBoolean(deleted)
      join.table(ChainRecord(k, null, if (gone) null else r.getStruct(value), r.getLong(time), gone), nowhere)
    }
    (shard, ChainState.write(p, nodes, ChainState.newClocks(p), ChainState.NoEpoch, groupKey = null))
  }
}
