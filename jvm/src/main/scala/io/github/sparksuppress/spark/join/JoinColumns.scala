package io.github.sparksuppress.spark.join

import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.spark.common.{InputColumns, KeyEncoding, RowCodec}

/**
 * The columns of a stream-table join, resolved and checked once for both the stand-alone plan and a chain that starts
 * with the join: which stream and table columns are the key, the timestamps and the tombstone, and which table
 * columns the output adds.
 */
private[sparksuppress] final case class JoinColumns(
    streamSchema: StructType,
    tableSchema: StructType,
    streamKeys: Array[Int],
    streamTs: Int,
    streamValues: Array[Int],
    tableKeys: Array[Int],
    tableTs: Int,
    tombstone: Option[Int],
    tableValueSchema: StructType
) {

  /** The table's columns by the names they resolved to (which may differ in case from what the user gave). */
  def tableColumns: TableColumns =
    TableColumns(
      tableKeys.map(tableSchema(_).name).toSeq,
      tableSchema(tableTs).name,
      tombstone.map(tableSchema(_).name),
      tableValueSchema
    )
}

/** The table's columns, by the names they resolved to; `values` are the value columns. */
private[sparksuppress] final case class TableColumns(
    keys: Seq[String],
    timestamp: String,
    tombstone: Option[String],
    values: StructType
) {
  def all: Seq[String] = keys ++ Seq(timestamp) ++ tombstone.toSeq ++ values.fieldNames
}

private[sparksuppress] object JoinColumns {

  def resolve(j: StreamTableJoinRequest, stream: StructType, table: StructType, operator: String): JoinColumns = {
    // The chain checked that `on` names distinct columns, at least one (ChainPlan.build, as for every operator).
    val streamSchema = InputColumns.operatorSchema(stream, nullable = true, "the stream", operator)
    val tableSchema = InputColumns.operatorSchema(table, nullable = true, "the table changelog", operator)
    val streamKeys = j.on.map(k => InputColumns.index(streamSchema, k, "key (on, stream side)", operator)).toArray
    val tableKeys = j.on.map(k => InputColumns.index(tableSchema, k, "key (on, table side)", operator)).toArray
    streamKeys.zip(tableKeys).foreach { case (s, t) =>
      val (sf, tf) = (streamSchema.fields(s), tableSchema.fields(t))
      KeyEncoding.requireGroupable(sf.dataType, sf.name)
      if (sf.dataType != tf.dataType) {
        throw new IllegalArgumentException(
          s"$operator: key column '${sf.name}' is ${sf.dataType.simpleString} on the stream side but " +
            s"${tf.dataType.simpleString} on the table side; both sides need the same key type. Cast one side, " +
            s"""e.g. col("${tf.name}").cast("${sf.dataType.simpleString}")."""
        )
      }
    }
    val streamTs = InputColumns.index(streamSchema, j.streamTimestamp, "stream timestamp", operator)
    InputColumns.requireTimestamp(streamSchema, streamTs, "stream timestamp", operator)
    val tableTs = InputColumns.index(tableSchema, j.table.timestamp, "table timestamp", operator)
    InputColumns.requireTimestamp(tableSchema, tableTs, "table timestamp", operator)
    val tombstone = j.table.tombstone.map { t =>
      val i = InputColumns.index(tableSchema, t, "tombstone", operator)
      InputColumns.requireBoolean(tableSchema, i, "tombstone", operator)
      i
    }
    if (streamKeys.contains(streamTs)) {
      throw new IllegalArgumentException(
        s"$operator: key column '${streamSchema.fields(streamTs).name}' is also the stream timestamp."
      )
    }
    (tombstone.toSeq :+ tableTs).find(tableKeys.contains).foreach { i =>
      throw new IllegalArgumentException(
        s"$operator: key column '${tableSchema.fields(i).name}' is also the table's timestamp or tombstone column."
      )
    }
    val tableValues = tableSchema.indices.filterNot(i => tableKeys.contains(i) || i == tableTs || tombstone.contains(i))
    val tableValueSchema = StructType(tableValues.map(tableSchema.fields))
    val clashes = tableValueSchema.fieldNames.filter(n => streamSchema.fieldNames.exists(_.equalsIgnoreCase(n)))
    if (clashes.nonEmpty) {
      throw new IllegalArgumentException(
        s"$operator: the output would have two columns named ${clashes.mkString("'", "', '", "'")} (a stream column " +
          "and a table value column). Rename one side first, e.g. table.withColumnRenamed(\"" + clashes.head +
          "\", \"table_" + clashes.head + "\")."
      )
    }
    streamSchema.fields.foreach(f => RowCodec.requireSupported(f.dataType, f.name))
    tableValueSchema.fields.foreach(f => RowCodec.requireSupported(f.dataType, f.name))
    val streamValues = streamSchema.indices.filterNot(i => streamKeys.contains(i) || i == streamTs).toArray
    JoinColumns(
      streamSchema,
      tableSchema,
      streamKeys,
      streamTs,
      streamValues,
      tableKeys,
      tableTs,
      tombstone,
      tableValueSchema
    )
  }
}
