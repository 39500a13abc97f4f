package io.github.sparksuppress.spark.join

import org.apache.spark.sql.{Column, DataFrame, Encoders, KeyValueGroupedDataset, Row}
import org.apache.spark.sql.api.java.UDF1
import org.apache.spark.sql.functions.{col, count, lit, max, struct, udf}
import org.apache.spark.sql.streaming.{GroupState, GroupStateTimeout, OutputMode}
import org.apache.spark.sql.types._

import io.github.sparksuppress.RuntimeCompatibility
import io.github.sparksuppress.core._
import io.github.sparksuppress.spark.common._

/**
 * Builds the Spark plan of a stream-table join ([[StreamTableJoinRequest]]): two `flatMapGroupsWithState` operators
 * in one query.
 *
 * Kafka's join keeps two clocks per task, across all its keys: the table's observed stream time (which writes are
 * accepted, which lookups are expired) and the grace buffer's stream time (when buffered records are released). So
 * the first operator, grouped by shard (one per state partition, like Kafka's tasks), holds only those clocks and the
 * grace buffer ([[JoinSequenceFunction]]); it emits the accepted table writes and the stream records to join, in
 * Kafka's order. The second, grouped by key, holds each key's version history and joins ([[JoinLookupFunction]]): a
 * micro-batch rewrites only the keys it touches, and a shard's state stays bounded by the grace period times the
 * stream's rate.
 *
 * Neither operator uses a timer (see [[withState]]). Buffered records are released by later stream records of their
 * shard, as in Kafka, so no watermark is needed on either input. When the stream has one and the join a grace period,
 * a shard that gets no more stream records still lets its records go once the watermark passes them (on by default):
 * [[ShardHeartbeats]] has Spark call every shard in each micro-batch that reads data, and the shard reads the
 * watermark through the bypass anchor.
 */
private[sparksuppress] object StreamTableJoinPlan {
  import StreamTableJoinLayout._

  def build(stream: DataFrame, j: StreamTableJoinRequest): DataFrame = {
    RuntimeCompatibility.check()
    val name = j.spec.name
    val operator = s"stream-table join '$name'"
    val table = j.table
    InputColumns.requireStreaming(stream, "the stream", operator)
    InputColumns.requireStreaming(table.changelog, "the table changelog", operator)
    val resolved = JoinColumns.resolve(j, stream.schema, table.changelog.schema, operator)
    import resolved.{streamKeys, streamSchema, streamTs, tableSchema, tableValueSchema}

    val spec = j.spec
    val streamValues = resolved.streamValues
    // Without a grace period nothing waits, and without a watermark on the stream there is nothing to release on.
    val releaseByWatermark = j.watermarkRelease && spec.graceMs.isDefined &&
      stream.schema.fields.exists(WatermarkBypass.hasMarker)
    if (j.idleTimeoutMs.isDefined && !releaseByWatermark) {
      throw new IllegalArgumentException(
        s"$operator: an idle timeout moves the release of waiting records on from the stream's watermark, but the " +
          s"""stream has none. Add one, e.g. stream.withWatermark("${streamSchema(streamTs).name}", "0 seconds")."""
      )
    }
    val params = JoinParams(
      name,
      j.explicitName,
      spec,
      streamSchema,
      tableValueSchema,
      streamKeys,
      streamValues,
      releaseByWatermark,
      j.idleTimeoutMs
    )
    val tableColumns = resolved.tableColumns
    val seed = table.initialVersions.map(v => new InitialVersions(v, tableColumns, tableSchema, operator))
    val op = registerMetrics(stream, name)

    val keyEncoder = KeyEncoding.encoder(StructType(streamKeys.map(streamSchema.fields)))
    val shards = ShardKeys.forPartitions(stream.sparkSession.sessionState.conf.numShufflePartitions)
    val columns = new SideColumns(keyEncoder, shards)
    val streamSide = stream.select(
      columns.side(
        StreamSide,
        streamKeys.map(streamSchema(_).name).toSeq,
        streamSchema(streamTs).name,
        streamRow = structOf(streamSchema),
        valueNull = allNull(streamValues.toSeq.map(i => streamSchema.fields(i).name)),
        tableRow = lit(null).cast(tableValueSchema),
        tombstone = lit(null).cast(BooleanType)
      ): _*
    )
    val tableSide = table.changelog.select(
      columns.side(
        TableSide,
        tableColumns.keys,
        tableColumns.timestamp,
        streamRow = lit(null).cast(streamSchema),
        valueNull = lit(false),
        tableRow = structOf(tableValueSchema),
        tombstone = tableColumns.tombstone.map(quoted).getOrElse(lit(null).cast(BooleanType))
      ): _*
    )
    val sides = streamSide.union(tableSide)
    val unioned =
      if (releaseByWatermark) ShardHeartbeats(sides, shards, In.names(In.Side), Heartbeat, In.ShardColumn) else sides
    val sequenceOut = Out.schema(streamSchema, tableValueSchema)
    val shardGroups =
      unioned.groupBy(col(In.ShardColumn)).as[Array[Byte], Row](Encoders.BINARY, Encoders.row(unioned.schema))
    val sequenceFn = new JoinSequenceFunction(params, op.accumulator)
    // With an idle timeout the shards are called on the wall clock too, also in batches without input (docs/join.md).
    val shardTimeout =
      if (j.idleTimeoutMs.isDefined) GroupStateTimeout.ProcessingTimeTimeout() else GroupStateTimeout.NoTimeout()
    val sequenced = withState(
      shardGroups,
      seed.flatMap(_.shardState(columns, j.explicitName, spec)),
      sequenceFn,
      sequenceOut,
      shardTimeout
    )

    val outputSchema = StructType(streamSchema.fields ++ tableValueSchema.fields.map(_.copy(nullable = true)))
    val keyGroups =
      sequenced.groupBy(col(Out.KeyColumn)).as[Array[Byte], Row](Encoders.BINARY, Encoders.row(sequenceOut))
    val lookupFn = new JoinLookupFunction(params, op.accumulator)
    val joined = withState(
      keyGroups,
      seed.map(_.keyState(columns, j.explicitName, spec, op.accumulator)),
      lookupFn,
      outputSchema,
      GroupStateTimeout.NoTimeout()
    )
    joined.observe(op.observationName, count(lit(1)).as("emitted"))
  }

  private type Grouped[V] = KeyValueGroupedDataset[Array[Byte], V]

  /**
   * `flatMapGroupsWithState` in append mode, from `initial` state if there is one. No timeouts but for an idle
   * timeout: Spark refuses an event-time timeout before another stateful operator (`ChainedStateProbeSuite`), and a
   * processing-time one makes it run a micro-batch on every trigger (`ProcessingTimeChainProbeSuite`), which only an
   * idle timeout wants; otherwise heartbeats do a timer's work.
   */
  private def withState(
      groups: Grouped[Row],
      initial: Option[Grouped[Array[Byte]]],
      fn: (Array[Byte], Iterator[Row], GroupState[Array[Byte]]) => Iterator[Row],
      output: StructType,
      timeout: GroupStateTimeout
  ): DataFrame = {
    val (state, out) = (Encoders.BINARY, Encoders.row(output))
    initial match {
      case Some(i) => groups.flatMapGroupsWithState(OutputMode.Append(), timeout, i)(fn)(state, out)
      case None => groups.flatMapGroupsWithState(OutputMode.Append(), timeout)(fn)(state, out)
    }
  }

  private def registerMetrics(stream: DataFrame, name: String): MetricsRegistry.Operator =
    OperatorMetricNames.join(stream.sparkSession, name)

  private def quoted(name: String): Column = col(ColumnNames.quote(name))

  /** A struct of `schema`'s columns, without the watermark markers a nested field could otherwise keep. */
  private def structOf(schema: StructType): Column =
    Structs.of(schema.fields.toSeq.map(f => quoted(f.name).as(f.name, f.metadata)))

  /** True when every one of `names` is null; false when there are none (a row without value columns is not null). */
  private def allNull(names: Seq[String]): Column =
    if (names.isEmpty) lit(false) else names.map(n => quoted(n).isNull).reduce(_ && _)

  /** The columns of one side's rows in the sequencer's input ([[StreamTableJoinLayout.In]]). */
  private[spark] final class SideColumns(keyEncoder: KeyEncoding.Encoder, shards: Array[Array[Byte]]) {
    private val keyBytes = udf(new KeyBytesUdf(keyEncoder, 0, windowed = false), BinaryType)
    private val shardOf = udf(new ShardUdf(shards), BinaryType)
    private val millis = udf(new EventMillisUdf, LongType)

    def key(keys: Seq[String]): Column = keyBytes(struct(keys.map(quoted): _*))
    def keyNull(keys: Seq[String]): Column = keys.map(k => quoted(k).isNull).reduce(_ || _)
    def time(timestamp: String): Column = millis(quoted(timestamp))
    def shard(key: Column): Column = shardOf(key)

    def side(
        side: Int,
        keys: Seq[String],
        timestamp: String,
        streamRow: Column,
        valueNull: Column,
        tableRow: Column,
        tombstone: Column
    ): Seq[Column] = {
      val k = key(keys)
      Seq(
        lit(side),
        k,
        keyNull(keys),
        valueNull,
        time(timestamp),
        ArrivalSequence.column,
        streamRow,
        tableRow,
        tombstone,
        shard(k)
      ).zip(In.names).map { case (c, n) => c.as(n) }
    }
  }

  /** The table's initial versions as Spark's initial state of both operators. */
  private final class InitialVersions(
      versions: DataFrame,
      table: TableColumns,
      tableSchema: StructType,
      operator: String
  ) {

    private val named: Map[String, String] = InitialVersionColumns.named(versions, table, tableSchema, operator)

    private def rows(columns: SideColumns): DataFrame = {
      val keys = table.keys.map(named)
      val k = columns.key(keys)
      versions.select(Seq(
        k,
        columns.shard(k),
        columns.time(named(table.timestamp)),
        table.tombstone.map(t => quoted(named(t))).getOrElse(lit(false)),
        Structs.of(table.values.fields.toSeq.map(f => quoted(named(f.name)).as(f.name, f.metadata))),
        columns.keyNull(keys)
      ).zip(Initial.names).map { case (c, n) => c.as(n) }: _*)
    }

    /** Per shard of a versioned table, its table time: the largest initial timestamp among its keys. */
    def shardState(columns: SideColumns, explicitName: Option[String], spec: StreamTableJoinSpec)
        : Option[Grouped[Array[Byte]]] =
      if (!spec.versioned) None
      else Some(rows(columns).where(!col(Initial.name(Initial.KeyNull))).groupBy(col(Initial.name(Initial.Shard)))
        .agg(max(col(Initial.name(Initial.Time))))
        .map(r => (r.getAs[Array[Byte]](0), JoinShardState.initial(r.getLong(1), explicitName)))(
          Encoders.tuple(Encoders.BINARY, Encoders.BINARY)
        )
        .groupByKey(_._1)(Encoders.BINARY).mapValues(_._2)(Encoders.BINARY))

    /** Per key, its versions (a versioned table) or its latest version (a non-versioned one). */
    def keyState(
        columns: SideColumns,
        explicitName: Option[String],
        spec: StreamTableJoinSpec,
        metrics: OperatorMetricsAccumulator
    ): Grouped[Array[Byte]] = {
      val input = rows(columns)
      val build = new InitialKeyState(spec, explicitName, table.values, operator, metrics)
      input.groupBy(col(Initial.name(Initial.Key))).as[Array[Byte], Row](Encoders.BINARY, Encoders.row(input.schema))
        .flatMapGroups(build)(Encoders.tuple(Encoders.BINARY, Encoders.BINARY))
        .groupByKey(_._1)(Encoders.BINARY).mapValues(_._2)(Encoders.BINARY)
    }
  }
}

/**
 * Builds one key's initial table state from its initial versions, applied in timestamp order. Rows with a null key
 * are dropped and counted, as the changelog's are.
 */
private[spark] final class InitialKeyState(
    spec: StreamTableJoinSpec,
    explicitName: Option[String],
    values: StructType,
    operator: String,
    metrics: OperatorMetricsAccumulator
) extends ((Array[Byte], Iterator[Row]) => Iterator[(Array[Byte], Array[Byte])]) with Serializable {
  import StreamTableJoinLayout.Initial

  @transient private lazy val rows = new RowCodec(values)

  override def apply(key: Array[Byte], versions: Iterator[Row]): Iterator[(Array[Byte], Array[Byte])] = {
    val all = versions.toArray
    if (all.head.getBoolean(Initial.KeyNull)) {
      if (metrics != null) metrics.count("dropped-null-table-key", all.length.toLong)
      Iterator.empty
    } else {
      if (all.exists(_.isNullAt(Initial.Time))) throw InitialVersionColumns.nullTimestamp(operator)
      val entry = TableEntry[Row](spec)
      all.sortBy(_.getLong(Initial.Time)).foreach { r =>
        val deleted = !r.isNullAt(Initial.Tombstone) && r.getBoolean(Initial.Tombstone)
        entry.write(r.getLong(Initial.Time), if (deleted) null else r.getStruct(Initial.Value), TableStreamTime.None)
      }
      Iterator.single((key, JoinKeyState.write(entry, explicitName, rows)))
    }
  }
}

/** Epoch milliseconds of an event-time value (null stays null: the sequencer reports it). */
private[spark] final class EventMillisUdf extends UDF1[Any, java.lang.Long] {
  override def call(t: Any): java.lang.Long = if (t == null) null else SparkTime.millis(t)
}
