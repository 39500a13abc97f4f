package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.spark.common.{InputColumns, RowCodec}
import io.github.sparksuppress.spark.join.StreamTableJoinRequest

/** A join's table side as the fused plan reads it: the changelog and its columns, by their resolved names. */
private[chain] final case class ChainTableSide(
    changelog: DataFrame,
    keys: Seq[String],
    timestamp: String,
    tombstone: Option[String],
    valueSchema: StructType)

/** Checks a stream-table join that starts a chain and resolves its node and table side. */
private[chain] object ChainJoin {

  def resolve(j: StreamTableJoinRequest, streamSchema: StructType, streamKeys: Array[Int], streamTs: Int,
      op: String): (JoinNodeSpec, ChainTableSide) = {
    if (j.table.initialVersions.isDefined) {
      throw new IllegalArgumentException(
        s"$op: initialVersions are not supported when the join starts a chain yet; run the join in a query of its " +
          "own, or feed the initial versions through the changelog.")
    }
    val table = j.table.changelog
    InputColumns.requireStreaming(table, "the table changelog", op)
    InputColumns.requireNoUpstreamStatefulOperator(table, op)
    val tableSchema = InputColumns.operatorSchema(table.schema, nullable = true, "the table changelog", op)
    val tableKeys = j.on.map(k => InputColumns.index(tableSchema, k, "key (on, table side)", op)).toArray
    streamKeys.zip(tableKeys).foreach { case (s, t) =>
      val (sf, tf) = (streamSchema.fields(s), tableSchema.fields(t))
      if (sf.dataType != tf.dataType) {
        throw new IllegalArgumentException(
          s"$op: key column '${sf.name}' is ${sf.dataType.simpleString} in the stream but ${tf.dataType.simpleString} " +
            "in the table; cast one side so that both match.")
      }
    }
    val tableTs = InputColumns.index(tableSchema, j.table.timestamp, "table timestamp", op)
    InputColumns.requireTimestamp(tableSchema, tableTs, "table timestamp", op)
    val tombstone = j.table.tombstone.map { t =>
      val i = InputColumns.index(tableSchema, t, "tombstone", op)
      InputColumns.requireBoolean(tableSchema, i, "tombstone", op)
      i
    }
    val values = tableSchema.indices.filterNot(i => tableKeys.contains(i) || i == tableTs || tombstone.contains(i)).toArray
    val valueSchema = StructType(values.map(tableSchema.fields))
    val clashes = valueSchema.fieldNames.filter(n => streamSchema.fieldNames.exists(_.equalsIgnoreCase(n)))
    if (clashes.nonEmpty) {
      throw new IllegalArgumentException(
        s"$op: the output would have two columns named ${clashes.mkString("'", "', '", "'")} (a stream column and a " +
          "table value column). Rename one side first, e.g. table.withColumnRenamed(\"" + clashes.head + "\", \"table_" +
          clashes.head + "\").")
    }
    valueSchema.fields.foreach(f => RowCodec.requireSupported(f.dataType, f.name))
    // The API has checked the grace rules; the node only renames the spec after the chain step.
    val spec = j.spec.copy(name = op)
    val streamValues = streamSchema.indices.filterNot(i => streamKeys.contains(i) || i == streamTs).toArray
    val node = JoinNodeSpec(op, spec, streamSchema, valueSchema, streamKeys, streamValues)
    (node, ChainTableSide(table, tableKeys.map(tableSchema(_).name).toSeq, tableSchema(tableTs).name,
      tombstone.map(tableSchema(_).name), valueSchema))
  }
}
