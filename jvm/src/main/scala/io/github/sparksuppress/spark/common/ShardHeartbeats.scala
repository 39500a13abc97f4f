package io.github.sparksuppress.spark.common

import org.apache.spark.TaskContext
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, GenericInternalRow, Generator}
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.sparksuppress.ExpressionColumns
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.compat.IterableOnce

/**
 * Passes a sharded operator's input rows through and adds, once per micro-batch that reads data, one heartbeat row
 * per shard, so that Spark calls every shard in that micro-batch: a join's shard that got no stream record can then
 * release its waiting records on the watermark.
 *
 * Why not a timer: the only timer Spark allows before another stateful operator is a processing-time timeout, and
 * with one Spark runs a micro-batch on every trigger whether or not input arrived, so a default-trigger query spins
 * and an `availableNow` query never finishes (`ProcessingTimeChainProbeSuite`). Heartbeats ride on the micro-batches
 * the input causes anyway.
 *
 * The heartbeats leave from the partition with index 0 only (its task ends with `terminate`, which Spark calls even
 * when the partition holds no rows; `SparkBehaviourProbeSuite`), so each shard gets one per micro-batch whatever the
 * partition count. A micro-batch without any input partition (Spark's no-data batches) gets none.
 *
 * A heartbeat row holds `heartbeat` in column `sideColumn`, its shard's grouping key in `shardColumn`, and nulls
 * elsewhere; the output has the input's columns, all nullable.
 */
private[sparksuppress] final case class ShardHeartbeats(
    children: Seq[Expression],
    schema: StructType,
    shards: Seq[Array[Byte]],
    sideColumn: Int,
    heartbeat: Int,
    shardColumn: Int
) extends Generator with CodegenFallback {

  override def elementSchema: StructType = StructType(schema.fields.map(_.copy(nullable = true)))

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): ShardHeartbeats =
    copy(children = newChildren)

  override def eval(input: InternalRow): IterableOnce[InternalRow] = {
    val values = new Array[Any](children.length)
    var i = 0
    while (i < values.length) { values(i) = children(i).eval(input); i += 1 }
    Iterator.single(new GenericInternalRow(values))
  }

  override def terminate(): IterableOnce[InternalRow] = {
    val task = TaskContext.get()
    if (task == null || task.partitionId() != 0) Nil
    else shards.iterator.map { shard =>
      val values = new Array[Any](children.length)
      values(sideColumn) = heartbeat
      values(shardColumn) = shard
      new GenericInternalRow(values)
    }
  }
}

private[sparksuppress] object ShardHeartbeats {

  /** `df` with a heartbeat row per shard added once per micro-batch, and the watermark anchor appended. */
  def apply(
      df: DataFrame,
      shards: Array[Array[Byte]],
      sideColumn: String,
      heartbeat: Int,
      shardColumn: String
  ): DataFrame = {
    val names = df.columns.toSeq
    val beats = ShardHeartbeats(
      names.map(n => ExpressionColumns.expression(col(ColumnNames.quote(n)))),
      df.schema,
      shards.toSeq,
      names.indexOf(sideColumn),
      heartbeat,
      names.indexOf(shardColumn)
    )
    // The anchor lets the shard read the watermark (it carries the marker, and is never late).
    df.select(ExpressionColumns.column(beats)).select(col("*"), WatermarkBypass.anchor)
  }
}
