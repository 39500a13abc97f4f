package io.github.sparksuppress.spark.suppress

import org.apache.spark.sql.{Column, DataFrame, Encoders, Row}
import org.apache.spark.sql.api.java.UDF1
import org.apache.spark.sql.functions.{col, count, lit, struct, udf}
import org.apache.spark.sql.streaming.{GroupStateTimeout, OutputMode}
import org.apache.spark.sql.types.{BinaryType, BooleanType, StructField, StructType}

import io.github.sparksuppress.RuntimeCompatibility
import io.github.sparksuppress.core.SuppressionClock
import io.github.sparksuppress.spark.common._

/**
 * Builds the Spark plan of a [[Suppress]]: checks the input, adds the internal columns, groups and calls
 * `flatMapGroupsWithState` with a [[SuppressFunction]].
 */
private[sparksuppress] object SuppressPlan {
  val RocksDBProvider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
  val LateColumn: String = SuppressLayout.LateColumn

  def build(df: DataFrame, s: SuppressRequest): DataFrame = {
    RuntimeCompatibility.check()
    val name = s.name
    val operator = s"suppress '$name'"
    InputColumns.requireStreaming(df, "the input", operator)
    InputColumns.requireNoUpstreamStatefulOperator(df, operator)
    if (s.key == null || s.key.isEmpty)
      throw new IllegalArgumentException(s"$operator: key must name at least one column.")
    InputColumns.distinct(s.key, "key", operator)

    val schema = InputColumns.operatorSchema(df.schema, nullable = true, "the input", operator)
    schema.fields.foreach(f => RowCodec.requireSupported(f.dataType, f.name))
    val keyIdx = s.key.map(k => InputColumns.index(schema, k, "key", operator)).toArray
    keyIdx.foreach(i => KeyEncoding.requireGroupable(schema.fields(i).dataType, schema.fields(i).name))
    val tsIdx = InputColumns.index(schema, s.timestamp, "timestamp", operator)
    InputColumns.requireTimestamp(schema, tsIdx, "timestamp", operator)
    val tombIdx = s.tombstone.map { t =>
      val i = InputColumns.index(schema, t, "tombstone", operator)
      InputColumns.requireBoolean(schema, i, "tombstone", operator)
      i
    }
    val window = s.window.map(WindowBounds.resolve(schema, _, operator))
    val windowIdx: Set[Int] = s.window.toSeq.flatMap {
      case WindowColumnNames.Struct(c) => Seq(InputColumns.index(schema, c, "window", operator))
      case WindowColumnNames.StartEnd(a, b) =>
        Seq(
          InputColumns.index(schema, a, "window start", operator),
          InputColumns.index(schema, b, "window end", operator)
        )
    }.toSet
    val overlapping = keyIdx.filter(i => i == tsIdx || windowIdx.contains(i) || tombIdx.contains(i))
    if (overlapping.nonEmpty) {
      throw new IllegalArgumentException(
        s"$operator: key column '${schema.fields(overlapping.head).name}' is also the event-time, window or " +
          s"tombstone column."
      )
    }
    val valueIdx = schema.indices.filterNot(i =>
      keyIdx.contains(i) || i == tsIdx || windowIdx.contains(i) || tombIdx.contains(i)
    ).toArray

    if (s.clock == SuppressionClock.EventTime) InputColumns.requireWatermark(df, "the input", s.timestamp, operator)
    if (s.spillToDisk) requireRocksDB(df, operator)
    val windowed = s.window.isDefined
    val spec = s.spec

    val op = OperatorMetricNames.suppress(df.sparkSession, name)

    val params = SuppressParams(
      operatorName = name,
      explicitName = s.explicitName,
      spec = spec,
      clock = s.clock,
      inputSchema = schema,
      timestampColumn = tsIdx,
      keyColumns = keyIdx,
      valueColumns = valueIdx,
      window = window,
      windowEndIsBufferTime = windowed,
      tombstoneColumn = tombIdx,
      sizeModel = s.sizeModel,
      sharded = s.sharded,
      epoch = nextEpoch(),
      emitLate = s.emitLate,
      idleTimeoutMs = s.idleTimeoutMs
    )
    val layout = SuppressLayout(schema)
    if (s.emitLate && schema.fieldNames.exists(_.equalsIgnoreCase(LateColumn))) {
      throw new IllegalArgumentException(
        s"$operator: the input has a column named '$LateColumn', which the output uses to flag late updates. " +
          "Rename that column before the operator."
      )
    }
    val outputSchema = layout.outputSchema(flagsLate = s.emitLate)

    val keyInputs: Seq[Column] = keyIdx.toSeq.map(i => col(ColumnNames.quote(schema.fields(i).name))) ++
      s.window.toSeq.flatMap {
        case WindowColumnNames.Struct(c) =>
          Seq(col(ColumnNames.quote(c) + ".start"), col(ColumnNames.quote(c) + ".end"))
        case WindowColumnNames.StartEnd(a, b) => Seq(col(ColumnNames.quote(a)), col(ColumnNames.quote(b)))
      }
    val keyBytes = udf(
      new KeyBytesUdf(KeyEncoding.encoder(StructType(keyIdx.map(schema.fields))), keyIdx.length, window.isDefined),
      BinaryType
    )
      .apply(struct(keyInputs: _*))

    val bypassed = WatermarkBypass(df)
    val userColumns = schema.fieldNames.toSeq.map(n => col(ColumnNames.quote(n)))
    val withKey = bypassed.select(
      layout.columns(userColumns, keyBytes, ArrivalSequence.column) :+ col(WatermarkBypass.AnchorColumn): _*
    )
    val (internal, groupColumn) =
      if (!s.sharded) (withKey, SuppressLayout.KeyColumn)
      else {
        val shards = ShardKeys.forPartitions(df.sparkSession.sessionState.conf.numShufflePartitions)
        val shardUdf = udf(new ShardUdf(shards), BinaryType)
        (
          withKey.withColumn(SuppressLayout.GroupColumn, shardUdf(col(SuppressLayout.KeyColumn))),
          SuppressLayout.GroupColumn
        )
      }

    // With an idle timeout, groups are called on the wall clock (one timeout kind per operator): docs/suppress.md.
    val timeout =
      if (s.clock == SuppressionClock.ProcessingTime || s.idleTimeoutMs.isDefined)
        GroupStateTimeout.ProcessingTimeTimeout()
      else GroupStateTimeout.EventTimeTimeout()
    val fn = new SuppressFunction(params, op.accumulator)
    val out = internal
      .groupBy(col(groupColumn))
      .as[Array[Byte], Row](Encoders.BINARY, Encoders.row(internal.schema))
      .flatMapGroupsWithState(OutputMode.Append(), timeout)(fn)(Encoders.BINARY, Encoders.row(outputSchema))
    out.observe(op.observationName, count(lit(1)).as("emitted"))
  }

  private def nextEpoch(): Long = {
    var e = 0L
    while (e == 0L || e == Long.MinValue) e = new java.util.Random().nextLong()
    e
  }

  /** untilWindowCloses over input with no window, stand-alone or in a chain: Kafka refuses it at build time too. */
  def notWindowed(operator: String): IllegalArgumentException = new IllegalArgumentException(
    s"$operator: untilWindowCloses needs windowed input: " +
      "Window close time is only defined for windowed computations. " +
      "Pass window (a struct column with start and end, as window() produces, or the start and end columns), or put " +
      "the suppress after aggregate_windowed in the same query; after a non-windowed aggregate use untilTimeLimit."
  )

  /** untilWindowCloses on windowed input whose grace nothing upstream in the query gives. */
  def noGrace(operator: String): IllegalArgumentException = new IllegalArgumentException(
    s"$operator: untilWindowCloses needs grace: how long after a window's end late updates may still arrive " +
      "(e.g. the grace of the windowed aggregation that produced the input; Duration.ZERO for none)."
  )

  /** spillToDisk() needs the RocksDB state store provider (one check for the stand-alone suppress and a chain's). */
  def requireRocksDB(df: DataFrame, operator: String): Unit = {
    val provider = df.sparkSession.conf.get("spark.sql.streaming.stateStore.providerClass", "")
    if (!provider.contains("RocksDB")) {
      throw new IllegalArgumentException(
        s"$operator: spillToDisk() keeps the buffer in the RocksDB state store, but the session's " +
          s"spark.sql.streaming.stateStore.providerClass is '${if (provider.isEmpty) "(default: HDFS-backed, in memory)"
            else provider}'. " +
          s"Set it to $RocksDBProvider before starting the query."
      )
    }
  }
}
