package io.github.sparksuppress.spark

import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.sql.{Column, DataFrame, Encoders, Row}
import org.apache.spark.sql.api.java.UDF1
import org.apache.spark.sql.functions.{col, count, lit, struct, udf}
import org.apache.spark.sql.streaming.{GroupStateTimeout, OutputMode}
import org.apache.spark.sql.types.{BinaryType, StructField, StructType}

import io.github.sparksuppress.RuntimeCompatibility
import io.github.sparksuppress.api._
import io.github.sparksuppress.core.SuppressionSpec

/** Builds the Spark plan of a [[Suppress]]: checks the input, adds the internal columns, groups and calls
 *  `flatMapGroupsWithState` with a [[SuppressFunction]]. */
object SuppressPlan {
  private val unnamed = new AtomicInteger()

  val RocksDBProvider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

  def build(df: DataFrame, s: Suppress): DataFrame = {
    RuntimeCompatibility.check()
    if (s.suppressed == null) throw new IllegalArgumentException("suppress: suppressed must not be null.")
    val name = s.suppressed.name.getOrElse(s"suppress-${unnamed.incrementAndGet()}")
    val operator = s"suppress '$name'"
    InputColumns.requireStreaming(df, "the input", operator)
    InputColumns.requireNoUpstreamStatefulOperator(df, operator)
    if (s.key == null || s.key.isEmpty) throw new IllegalArgumentException(s"$operator: key must name at least one column.")
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
    val window = s.window.map(resolveWindow(schema, _, operator))
    val windowIdx: Set[Int] = s.window.toSeq.flatMap {
      case WindowColumns.Struct(c) => Seq(InputColumns.index(schema, c, "window", operator))
      case WindowColumns.StartEnd(a, b) =>
        Seq(InputColumns.index(schema, a, "window start", operator), InputColumns.index(schema, b, "window end", operator))
    }.toSet
    val overlapping = keyIdx.filter(i => i == tsIdx || windowIdx.contains(i) || tombIdx.contains(i))
    if (overlapping.nonEmpty) {
      throw new IllegalArgumentException(
        s"$operator: key column '${schema.fields(overlapping.head).name}' is also the event-time, window or tombstone column.")
    }
    val valueIdx = schema.indices.filterNot(i => keyIdx.contains(i) || i == tsIdx || windowIdx.contains(i) || tombIdx.contains(i)).toArray

    val bc = s.suppressed.bufferConfig
    val (timeLimitMs, rule, clock, windowed) = s.suppressed match {
      case t: Suppressed.TimeLimit =>
        if (s.grace.isDefined) {
          throw new IllegalArgumentException(
            s"$operator: grace applies to untilWindowCloses only; untilTimeLimit waits timeToWaitForMoreEvents " +
              s"(${t.timeToWaitForMoreEvents}) after each key's buffer time. Drop the grace argument.")
        }
        (t.timeLimitMs, t.bufferTimeRule, t.clock, false)
      case w: Suppressed.WindowCloses =>
        if (window.isEmpty) {
          throw new IllegalArgumentException(
            s"$operator: untilWindowCloses needs windowed input: pass window (a struct column with start and end, " +
              "as window() produces, or the start and end columns). Window close time is only defined for windowed " +
              "computations.")
        }
        val grace = s.grace.getOrElse(throw new IllegalArgumentException(
          s"$operator: untilWindowCloses needs grace: how long after a window's end late updates may still arrive " +
            "(e.g. the grace of the windowed aggregation that produced the input; Duration.ZERO for none)."))
        (Durations.millis("grace", grace), io.github.sparksuppress.core.BufferTimeRule.First, SuppressionClock.EventTime, true)
    }
    if (clock == SuppressionClock.EventTime) InputColumns.requireWatermark(df, "the input", s.timestamp, operator)
    if (bc.spillsToDisk) requireRocksDB(df, operator)

    val sharded = bc.isBounded
    val spec = SuppressionSpec(
      name = name,
      timeLimitMs = timeLimitMs,
      maxRecords = if (bc.spillsToDisk) Long.MaxValue else bc.maxRecords,
      maxBytes = if (bc.spillsToDisk) Long.MaxValue else bc.maxBytes,
      whenFull = bc.bufferFullStrategy,
      dropTombstones = windowed,
      bufferTimeRule = rule)

    val op = MetricsRegistry.register(df.sparkSession, "suppress", name, Seq("buffer-count", "buffer-bytes")) { (snap, o) =>
      Map(
        "suppression-emit-total" -> snap.counters.getOrElse("emitted", 0L).toDouble,
        "suppression-buffer-count-current" -> o.currentGauge(snap, "buffer-count").toDouble,
        "suppression-buffer-count-avg" -> snap.averages.getOrElse("buffer-count", o.average("buffer-count")),
        "suppression-buffer-count-max" -> snap.maxima.get("buffer-count").map(_.toDouble).getOrElse(o.maximum("buffer-count")),
        "suppression-buffer-size-current" -> o.currentGauge(snap, "buffer-bytes").toDouble,
        "suppression-buffer-size-avg" -> snap.averages.getOrElse("buffer-bytes", o.average("buffer-bytes")),
        "suppression-buffer-size-max" -> snap.maxima.get("buffer-bytes").map(_.toDouble).getOrElse(o.maximum("buffer-bytes")))
    }

    val params = SuppressParams(
      operatorName = name,
      explicitName = s.suppressed.name,
      spec = spec,
      clock = clock,
      inputSchema = schema,
      timestampColumn = tsIdx,
      keyColumns = keyIdx,
      valueColumns = valueIdx,
      window = window,
      windowEndIsBufferTime = windowed,
      tombstoneColumn = tombIdx,
      sizeModel = bc.sizeModel,
      sharded = sharded,
      epoch = nextEpoch())

    val keyInputs: Seq[Column] = keyIdx.toSeq.map(i => col(WatermarkBypass.quote(schema.fields(i).name))) ++
      s.window.toSeq.flatMap {
        case WindowColumns.Struct(c) =>
          Seq(col(WatermarkBypass.quote(c) + ".start"), col(WatermarkBypass.quote(c) + ".end"))
        case WindowColumns.StartEnd(a, b) => Seq(col(WatermarkBypass.quote(a)), col(WatermarkBypass.quote(b)))
      }
    val keyBytes = udf(new KeyBytesUdf(KeyEncoding.encoder(StructType(keyIdx.map(schema.fields))), keyIdx.length, window.isDefined), BinaryType)
      .apply(struct(keyInputs: _*))

    val bypassed = WatermarkBypass(df)
    val userColumns = schema.fieldNames.toSeq.map(n => col(WatermarkBypass.quote(n)))
    val withKey = bypassed.select(
      userColumns ++ Seq(keyBytes.as(SuppressFunction.KeyColumn), ArrivalSequence.column.as(SuppressFunction.SeqColumn),
        col(WatermarkBypass.AnchorColumn)): _*)
    val (internal, groupColumn) =
      if (!sharded) (withKey, SuppressFunction.KeyColumn)
      else {
        val shards = ShardKeys.forPartitions(df.sparkSession.sessionState.conf.numShufflePartitions)
        val shardUdf = udf(new ShardUdf(shards), BinaryType)
        (withKey.withColumn(SuppressFunction.GroupColumn, shardUdf(col(SuppressFunction.KeyColumn))), SuppressFunction.GroupColumn)
      }

    val timeout = clock match {
      case SuppressionClock.EventTime => GroupStateTimeout.EventTimeTimeout()
      case SuppressionClock.ProcessingTime => GroupStateTimeout.ProcessingTimeTimeout()
    }
    val fn = new SuppressFunction(params, op.accumulator)
    val out = internal
      .groupBy(col(groupColumn))
      .as[Array[Byte], Row](Encoders.BINARY, Encoders.row(internal.schema))
      .flatMapGroupsWithState(OutputMode.Append(), timeout)(fn)(Encoders.BINARY, Encoders.row(schema))
    out.observe(op.observationName, count(lit(1)).as("emitted"))
  }

  private def nextEpoch(): Long = {
    var e = 0L
    while (e == 0L || e == Long.MinValue) e = new java.util.Random().nextLong()
    e
  }

  private def resolveWindow(schema: StructType, w: WindowColumns, operator: String): WindowBounds = w match {
    case WindowColumns.Struct(c) =>
      val i = InputColumns.index(schema, c, "window", operator)
      schema.fields(i).dataType match {
        case st: StructType if st.length >= 2 && InputColumns.isTimestamp(st.fields(0).dataType) &&
            InputColumns.isTimestamp(st.fields(1).dataType) =>
          WindowBounds.InStruct(i, c)
        case other =>
          throw new IllegalArgumentException(
            s"$operator: window column '$c' must be a struct of timestamps (start, end), as window() produces, " +
              s"but it is ${other.simpleString}.")
      }
    case WindowColumns.StartEnd(a, b) =>
      val i = InputColumns.index(schema, a, "window start", operator)
      val j = InputColumns.index(schema, b, "window end", operator)
      InputColumns.requireTimestamp(schema, i, "window start", operator)
      InputColumns.requireTimestamp(schema, j, "window end", operator)
      WindowBounds.Columns(i, j, s"$a, $b")
  }

  private def requireRocksDB(df: DataFrame, operator: String): Unit = {
    val provider = df.sparkSession.conf.get("spark.sql.streaming.stateStore.providerClass", "")
    if (!provider.contains("RocksDB")) {
      throw new IllegalArgumentException(
        s"$operator: spillToDisk() keeps the buffer in the RocksDB state store, but the session's " +
          s"spark.sql.streaming.stateStore.providerClass is '${if (provider.isEmpty) "(default: HDFS-backed, in memory)" else provider}'. " +
          s"Set it to $RocksDBProvider before starting the query.")
    }
  }
}

/** Encodes a row's key (and window bounds) into the injective, Kafka-ordered bytes of [[KeyEncoding]]. */
private[spark] final class KeyBytesUdf(encoder: KeyEncoding.Encoder, keyCount: Int, windowed: Boolean)
    extends UDF1[Row, Array[Byte]] {
  override def call(r: Row): Array[Byte] =
    if (!windowed) encoder.encode(r)
    else {
      val start = if (r.isNullAt(keyCount)) Long.MinValue else SparkTime.millis(r.get(keyCount))
      val end = if (r.isNullAt(keyCount + 1)) Long.MinValue else SparkTime.millis(r.get(keyCount + 1))
      encoder.encodeWithWindow(r, start, end)
    }
}

/** Maps an encoded key to the grouping key of its shard. */
private[spark] final class ShardUdf(shards: Array[Array[Byte]]) extends UDF1[Array[Byte], Array[Byte]] {
  override def call(key: Array[Byte]): Array[Byte] = shards(ShardKeys.shardOf(key, shards.length))
}
