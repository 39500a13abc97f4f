package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.{Column, DataFrame, Encoders, Row}
import org.apache.spark.sql.catalyst.encoders.{ExpressionEncoder, RowEncoder}
import org.apache.spark.sql.catalyst.expressions.{Alias, BindReferences, Expression}
import org.apache.spark.sql.catalyst.plans.logical.Project
import org.apache.spark.sql.sparksuppress.PlanFrames
import org.apache.spark.sql.functions.{col, count, lit, struct, udf, unix_millis}
import org.apache.spark.sql.sparksuppress.ExpressionColumns
import org.apache.spark.sql.streaming.{GroupStateTimeout, OutputMode}
import org.apache.spark.sql.types._

import io.github.sparksuppress.RuntimeCompatibility
import io.github.sparksuppress.core.{
  EmitMode,
  SessionWindowDefinition,
  SuppressionClock,
  TimeWindowDefinition,
  WindowDefinition
}
import io.github.sparksuppress.spark.common.{
  ArrivalSequence,
  ColumnNames,
  EventMillisUdf,
  InputColumns,
  InputRule,
  KeyBytesUdf,
  KeyEncoding,
  OperatorMetricNames,
  OperatorMetricsAccumulator,
  RowCodec,
  ShardHeartbeats,
  ShardKeys,
  ShardUdf,
  Structs,
  WatermarkBypass
}
import io.github.sparksuppress.spark.join.{
  InitialKeyState,
  JoinLookupFunction,
  JoinLookupParams,
  JoinSequenceRows
}
import io.github.sparksuppress.spark.suppress.{SuppressRules, WindowBounds, WindowColumnNames}
import io.github.sparksuppress.spark.window.{
  EarlyClose,
  MapSideParams,
  TypedAggregateColumn,
  WindowAggregateMapSide,
  WindowAggregateRequest,
  WindowAggregateResolver
}

/**
 * Builds the one stateful step that runs a chain of this library's operators: checks every step on the driver against
 * the schema the step before it produces, then groups the first step's input by shard and calls
 * `flatMapGroupsWithState` with a [[ChainFunction]]. See docs/chains.md for why the chain is fused.
 */
object ChainPlan {
  import ChainRows.{Group => GroupColumn, KeyColumn, KeyValuesColumn, SideColumn, TableRowColumn, TimeColumn}
  import ChainRows.TombstoneColumn

  /** A suppress of a table's changelog (its input is a KTable: a `where` on it has KTable semantics). */
  private def readsChangelog(step: ChainStep): Boolean = step match {
    case ChainStep.SuppressStep(s) => s.tombstone.isDefined
    case _ => false
  }

  /**
   * Applies `step` to `df`: when `df` is the output of a chain of this library's operators (directly or through
   * `where`/`select` steps), the chain is rebuilt from its input with those steps and `step` appended; otherwise
   * `standalone` builds the operator on its own. Either way the result is remembered, so that the next operator can
   * extend it.
   */
  def apply(df: DataFrame, step: ChainStep)(standalone: DataFrame => DataFrame): DataFrame =
    ChainRegistry.lookup(df) match {
      case ChainRegistry.Extends(d) => build(d.copy(steps = d.steps :+ step))
      case ChainRegistry.Under(node, d) =>
        val upstream = d.operators.map(s => s"${s.kind} '${s.name}'").mkString(" -> ")
        throw new IllegalArgumentException(
          s"${step.kind} '${step.name}': its input applies Spark's $node to the output of $upstream. Between this " +
            "library's operators in one query only where/filter and select/withColumn that keep the key and " +
            "timestamp columns can stand (they run inside the chain, as Kafka's filter and mapValues). Re-keying, " +
            "joins and Spark aggregations need a second query: write the upstream result to a sink and read it " +
            "there (Kafka needs a repartition topic for them too)."
        )
      case ChainRegistry.OnInput(base, stateless)
          if readsChangelog(step) && stateless.exists(_.isInstanceOf[ChainStep.FilterStep]) =>
        // Kafka's builder.table(...).filter(...).suppress(...): the filter is a KTable's, with old values.
        build(ChainDescription(PlanFrames.of(df.sparkSession, base), stateless :+ step))
      case _ => ChainRegistry.register(standalone(df), ChainDescription(df, Seq(step)))
    }

  def build(d: ChainDescription): DataFrame = {
    RuntimeCompatibility.check()
    val names = d.steps.map(s => s"${s.kind} '${s.name}'")
    val operator = if (names.length == 1) names.head else s"chain ${names.mkString(" -> ")}"
    d.steps.zipWithIndex.collectFirst { case (ChainStep.JoinStep(_), i) if i > 0 => i }.foreach { i =>
      throw new IllegalArgumentException(
        s"${names(i)}: a stream-table join can only start a chain; its stream here is the output of ${names(i - 1)}. " +
          "Join first and aggregate or suppress the joined stream, " +
          "or write the upstream result to a sink and join it " +
          "in a second query."
      )
    }
    LateRows.requireNoStatelessStepAfter(d.steps, names)
    val emitsLate = d.steps.exists(ChainStep.emitsLate)
    val df = d.input
    // The first operator reads the input, and errors name it and its parameters as that operator does.
    val first = d.operators.head
    InputColumns.requireStreaming(df, first.inputName, operator)
    InputColumns.requireNoUpstreamStatefulOperator(df, operator)

    val schema = InputColumns.operatorSchema(df.schema, nullable = true, first.inputName, operator)
    schema.fields.foreach(f => RowCodec.requireSupported(f.dataType, f.name))
    // Stateless steps stand before the first operator only when it suppresses a table's changelog.
    val firstAt = d.steps.indexOf(first)
    val (keyNames, tsName) = (first.key, first.timestamp)
    if (keyNames == null || keyNames.isEmpty)
      throw new IllegalArgumentException(s"$operator: ${first.keyArgument} must name at least one column.")
    InputColumns.distinct(keyNames, first.keyArgument, operator)
    val keyIdx = keyNames.map(k => InputColumns.index(schema, k, first.keyParameter, operator)).toArray
    keyIdx.foreach(i => KeyEncoding.requireGroupable(schema.fields(i).dataType, schema.fields(i).name))
    val tsIdx = InputColumns.index(schema, tsName, first.timestampParameter, operator)
    InputColumns.requireTimestamp(schema, tsIdx, first.timestampParameter, operator)
    // A suppress forwards its input rows as they are, a windowed aggregation renders its input's kind of event time,
    // and so does a join on its own; a join with operators after it, or a non-windowed aggregation, renders TIMESTAMP
    // event times.
    val suppressFirst = first.isInstanceOf[ChainStep.SuppressStep]
    val windowedFirst = first.isInstanceOf[ChainStep.WindowedAggregateStep]
    val loneJoin = d.steps match {
      case Seq(ChainStep.JoinStep(_)) => true
      case _ => false
    }
    if (!suppressFirst && !windowedFirst && !loneJoin && schema.fields(tsIdx).dataType != TimestampType) {
      throw new IllegalArgumentException(
        s"$operator: a chain's event-time column must be TIMESTAMP; '${schema.fields(tsIdx).name}' is " +
          s"${schema.fields(tsIdx).dataType.simpleString}. Convert it first, e.g. with to_utc_timestamp."
      )
    }
    if (keyIdx.contains(tsIdx)) {
      throw new IllegalArgumentException(
        s"$operator: key column '${schema.fields(tsIdx).name}' is also the event-time column."
      )
    }
    val joinFirst = first.isInstanceOf[ChainStep.JoinStep]
    // A suppress on the wall clock needs no watermark to start a chain (its clock is the micro-batch's time).
    val wallClockFirst = first match {
      case ChainStep.SuppressStep(s) => s.clock == SuppressionClock.ProcessingTime
      case _ => false
    }
    if (!joinFirst && !wallClockFirst) InputColumns.requireWatermark(df, first.inputName, tsName, operator)
    val watermarked = df.schema.fields.exists(WatermarkBypass.hasMarker)
    val keySchema = StructType(keyIdx.map(i => schema.fields(i).copy(nullable = true)))

    // The first step's input extras: a changelog's tombstone column, a windowed input's window.
    val (tombstone, window, windowColumns) = first match {
      case ChainStep.SuppressStep(s) =>
        val t = s.tombstone.map { c =>
          val i = InputColumns.index(schema, c, "tombstone", operator)
          InputColumns.requireBoolean(schema, i, "tombstone", operator)
          i
        }
        val columns = s.window.toSeq.flatMap(_.columns)
        val overlapping = (s.tombstone.toSeq ++ columns).find(c => keyNames.exists(_.equalsIgnoreCase(c)))
        overlapping.foreach { c =>
          throw new IllegalArgumentException(s"$operator: key column '$c' is also the window or tombstone column.")
        }
        (t, s.window.map(WindowBounds.resolve(schema, _, operator)), columns)
      case _ => (None, None, Nil)
    }
    // A physical choice: a lone unbounded suppress or windowed aggregation keeps its state per key (bounded buffers
    // need a whole shard; several nodes share Kafka's stream time per task, here per shard).
    val perKey = d.steps match {
      case Seq(ChainStep.SuppressStep(s)) => !s.request.sharded
      case Seq(ChainStep.WindowedAggregateStep(_)) => true
      case _ => false
    }
    // Another: a lone join keeps its table per key, in a lookup after the chain (the shard keeps the clocks and the
    // grace buffer), so that a micro-batch rewrites only the table keys it touches.
    val tablePerKey = loneJoin

    val r = new ChainResolution(
      schema,
      None,
      schema.fields(tsIdx).name,
      table = !joinFirst,
      tombstone.map(schema.fields(_).name),
      windowColumns,
      None
    )
    var table: Option[ChainTableSide] = None
    val nodes = d.steps.zipWithIndex.map { case (step, i) =>
      val op = names(i)
      if (ChainStep.isOperator(step)) checkKeyAndTimestamp(step, r.schema, keyNames, i, op)
      step match {
        case ChainStep.SuppressStep(s) => suppress(df, s, i == firstAt, r, keyNames, window.isDefined, perKey, op)
        case ChainStep.WindowedAggregateStep(a) => windowedAggregate(df, a, r, keySchema, d.steps.length == 1, op)
        case ChainStep.KeyAggregateStep(a) => keyAggregate(df, a, r, keySchema, op)
        case ChainStep.JoinStep(j) =>
          val (spec, side) = ChainJoin.resolve(j, schema, tablePerKey, op)
          table = Some(side)
          r.schema = StructType(schema.fields ++ side.valueSchema.fields.map(_.copy(nullable = true)))
          r.table = false
          spec
        case f: ChainStep.FilterStep => ChainStateless.filter(f, d.steps.drop(i + 1), keyNames, r, op)
        case p: ChainStep.ProjectStep => ChainStateless.project(p, keyNames, r, op)
      }
    }.toIndexedSeq

    // As the stand-alone join: with a grace period and a watermark on the stream, waiting records also leave on it.
    val joinReleases = first match {
      case ChainStep.JoinStep(j) =>
        val releases = j.watermarkRelease && j.spec.graceMs.isDefined && watermarked
        if (j.idleTimeoutMs.isDefined && !releases) {
          throw new IllegalArgumentException(
            s"$operator: an idle timeout moves the release of waiting records on from the stream's watermark, but " +
              s"""the stream has none. Add one, e.g. stream.withWatermark("$tsName", "0 seconds")."""
          )
        }
        releases
      case _ => false
    }
    /* Each operator's metrics under Kafka's names, as the operator on its own reports them (filters and maps have
     * none). */
    val spark = df.sparkSession
    val registered = d.steps.map {
      case ChainStep.SuppressStep(s) => Some(OperatorMetricNames.suppress(spark, s.name))
      case ChainStep.WindowedAggregateStep(a) => Some(OperatorMetricNames.windowedAggregation(spark, a.name))
      case ChainStep.KeyAggregateStep(a) => Some(OperatorMetricNames.aggregation(spark, a.name))
      case ChainStep.JoinStep(j) => Some(OperatorMetricNames.join(spark, j.spec.name))
      case _ => None
    }
    val params = ChainParams(
      operator,
      schema,
      schema.fields(tsIdx).name,
      tombstone,
      window,
      nodes,
      new ChainKeyCodec(keySchema),
      followsWatermark = !joinFirst && (!wallClockFirst || watermarked),
      joinReleases = joinReleases,
      metrics = registered.map(_.map(_.accumulator).orNull).toIndexedSeq,
      emitsLate = emitsLate,
      idleTimeouts = d.steps.map(_.idleTimeoutMs).toIndexedSeq,
      explicitNames = d.steps.map(_.explicitName).toIndexedSeq,
      perKey = perKey,
      inputRule = first match {
        case _: ChainStep.SuppressStep => InputRule.suppress(wallClockFirst)
        case _: ChainStep.WindowedAggregateStep => InputRule.WindowedAggregation
        case _ => InputRule.Keyed
      },
      streamKeys = keyIdx.toIndexedSeq
    )
    val shards = ShardKeys.forPartitions(df.sparkSession.sessionState.conf.numShufflePartitions)
    val keyBytes = udf(new KeyBytesUdf(KeyEncoding.encoder(keySchema), 0, false), BinaryType)
    val millis = udf(new EventMillisUdf, LongType)
    val tableValue = table.map(_.valueSchema).getOrElse(StructType(Nil))
    // keys: the columns a side's key is read from; a stream row's values are read from its user row instead
    // (ChainParams.streamKeys), so that they cross the shuffle once.
    def side(
        from: DataFrame,
        user: Column,
        keys: Seq[String],
        side: Int,
        value: Column,
        deleted: Column,
        ts: String
    ): DataFrame = {
      val keyValues = struct(keys.zip(keySchema.fieldNames).map { case (k, n) => col(ColumnNames.quote(k)).as(n) }: _*)
      from.select(ChainRows.columns(
        user,
        // Per key, each call encodes its group's key once (PerKeyChainFunction).
        if (perKey) lit(null).cast(BinaryType) else keyBytes(keyValues),
        ArrivalSequence.column,
        if (side == ChainRows.StreamSide) lit(null).cast(keySchema) else keyValues,
        lit(side),
        value,
        deleted,
        millis(col(ColumnNames.quote(ts)))
      ): _*)
    }
    val userRow = struct(schema.fieldNames.toSeq.map(n => col(ColumnNames.quote(n))): _*)
    val streamKeys = keyIdx.toSeq.map(schema.fields(_).name)
    def streamSide(from: DataFrame): DataFrame = side(
      from,
      userRow,
      streamKeys,
      ChainRows.StreamSide,
      lit(null).cast(tableValue),
      lit(null).cast(BooleanType),
      schema.fields(tsIdx).name
    )
    // The rows the stateful call groups, and the columns of them that hold the chain's key (per key, Spark groups by
    // those): the map side's rows lead with the key's columns (ShuffleRows), a stream row keeps them in its user row.
    // A join's rows have none: its table rows keep the key elsewhere, and they are grouped by shard.
    val (internal, keyColumns) = table match {
      case None =>
        // Event-time timers need a watermarked column, and no user column may keep the marker (WatermarkBypass).
        val bypassed = WatermarkBypass(df)
        val (rows, keys) = nodes.head match {
          case w: WindowedAggregateNodeSpec if w.mapSide.isDefined =>
            val agg = d.steps.head.asInstanceOf[ChainStep.WindowedAggregateStep].r
            val shuffled = mapSideInput(bypassed, w, agg, streamKeys)
            // Already under the key's names (ShuffleRows): grouped by as they are, since an alias would make Spark
            // append the key to every shuffled row a second time.
            (shuffled, shuffled.columns.toSeq.take(keySchema.length).map(c => col(ColumnNames.quote(c))))
          case _ =>
            (streamSide(bypassed), streamKeys.map(n => col(ChainRows.UserRowColumn).getField(n).as(n)))
        }
        (rows.withColumn(WatermarkBypass.AnchorColumn, WatermarkBypass.anchor), Some(keys))
      case Some(t) =>
        // A join's clock moves only with its stream records: no timers, and no watermark column unless it releases
        // on the watermark (ShardHeartbeats adds the anchor then).
        val stream =
          df.select(schema.fieldNames.toSeq.map(n => col(ColumnNames.quote(n)).as(n, schema(n).metadata)): _*)

        val tableSide = side(
          t.changelog,
          lit(null).cast(schema),
          t.keys,
          ChainRows.TableSide,
          Structs.of(tableValue.fieldNames.toSeq.map(n => col(ColumnNames.quote(n)))),
          t.tombstone.map(c => col(ColumnNames.quote(c))).getOrElse(lit(null).cast(BooleanType)),
          t.timestamp
        )
        (streamSide(stream).union(tableSide), None)
    }
    val shard = udf(new ShardUdf(shards), BinaryType)
    val outputSchema = nodes.head match {
      case j: JoinNodeSpec if j.tablePerKey => JoinSequenceRows.schema(j.streamSchema, j.tableValueSchema)
      case _ => if (emitsLate) LateRows.flagged(r.schema, operator) else r.schema
    }
    val timeout =
      if (params.onWallClock) GroupStateTimeout.ProcessingTimeTimeout()
      else if (joinFirst) GroupStateTimeout.NoTimeout()
      else GroupStateTimeout.EventTimeTimeout()
    // A join's initial versions become each shard's initial state, its table written with them (with the table per
    // key, the shard keeps only the table time they set, and the lookup's keys start from them).
    val initialRows = table.flatMap(t =>
      t.initial.map { i =>
        val v = (c: String) => col(ColumnNames.quote(i.named(c)))
        val keyValues = struct(t.keys.zip(keySchema.fieldNames).map { case (k, n) => v(k).as(n) }: _*)
        i.versions.select(
          keyBytes(keyValues).as(KeyColumn),
          keyValues.as(KeyValuesColumn),
          millis(v(t.timestamp)).as(TimeColumn),
          t.tombstone.map(v).getOrElse(lit(false)).as(TombstoneColumn),
          Structs.of(tableValue.fieldNames.toSeq.map(n => v(n).as(n))).as(TableRowColumn)
        )
      }
    )
    val initial = initialRows.map { rows =>
      val at = (c: String) => rows.schema.fieldIndex(c)
      val build = new ChainInitialState(
        params,
        at(KeyColumn),
        at(KeyValuesColumn),
        at(TimeColumn),
        at(TombstoneColumn),
        at(TableRowColumn)
      )
      val keyed = rows.withColumn(GroupColumn, shard(col(KeyColumn)))
      keyed.groupBy(col(GroupColumn)).as[Array[Byte], Row](Encoders.BINARY, Encoders.row(keyed.schema))
        .mapGroups(build)(Encoders.tuple(Encoders.BINARY, Encoders.BINARY))
        .groupByKey(_._1)(Encoders.BINARY).mapValues(_._2)(Encoders.BINARY)
    }
    val rowsOut = ExpressionEncoder(RowEncoder.encoderFor(outputSchema, lenient = true))
    val chained =
      if (perKey) {
        // Per key, Spark groups by the key's own columns, as its aggregations do: sorting them is cheap (a string's
        // first bytes decide most comparisons), where encoded keys are copied for every comparison.
        val keys = keyColumns.getOrElse(throw new IllegalStateException(s"$operator: a join's rows are never per key"))
        val groups = internal.groupBy(keys: _*).as[Row, Row](Encoders.row(keySchema), Encoders.row(internal.schema))
        val function = new PerKeyChainFunction(params, KeyEncoding.encoder(keySchema))
        groups.flatMapGroupsWithState(OutputMode.Append(), timeout)(function)(Encoders.BINARY, rowsOut)
      } else {
        val sharded = internal.withColumn(GroupColumn, shard(col(KeyColumn)))
        val grouped =
          if (joinReleases) ShardHeartbeats(sharded, shards, SideColumn, ChainRows.Heartbeat, GroupColumn) else sharded
        val groups =
          grouped.groupBy(col(GroupColumn)).as[Array[Byte], Row](Encoders.BINARY, Encoders.row(grouped.schema))
        val function = new ChainFunction(params)
        initial match {
          case Some(i) =>
            groups.flatMapGroupsWithState(OutputMode.Append(), timeout, i)(function)(Encoders.BINARY, rowsOut)
          case None => groups.flatMapGroupsWithState(OutputMode.Append(), timeout)(function)(Encoders.BINARY, rowsOut)
        }
      }
    val out = nodes.head match {
      case j: JoinNodeSpec if j.tablePerKey =>
        lookup(chained, j, r.schema, d.steps.head.explicitName, initialRows, params.metrics.headOption.orNull)
      case _ => chained
    }
    // An observation per operator tells the metrics registry which query runs it (MetricsRegistry).
    val observed = registered.flatten.foldLeft(out)((o, m) => o.observe(m.observationName, count(lit(1)).as("emitted")))
    ChainRegistry.register(observed, d)
  }

  /**
   * A lone join's table, per key ([[JoinLookupFunction]]): the join's node forwards its accepted table writes and the
   * stream records to join ([[JoinSequenceRows]]), and each key applies and joins them in that order.
   */
  private def lookup(
      sequenced: DataFrame,
      j: JoinNodeSpec,
      outputSchema: StructType,
      explicitName: Option[String],
      initialRows: Option[DataFrame],
      metrics: OperatorMetricsAccumulator
  ): DataFrame = {
    val p = JoinLookupParams(j.operator, explicitName, j.spec, j.streamSchema, j.tableValueSchema)
    val keys = sequenced.groupBy(col(JoinSequenceRows.KeyColumn))
      .as[Array[Byte], Row](Encoders.BINARY, Encoders.row(sequenced.schema))
    val initial = initialRows.map { rows =>
      val at = (c: String) => rows.schema.fieldIndex(c)
      val build = new InitialKeyState(
        j.spec,
        explicitName,
        j.tableValueSchema,
        j.operator,
        metrics,
        at(KeyValuesColumn),
        at(TimeColumn),
        at(TombstoneColumn),
        at(TableRowColumn)
      )
      rows.groupBy(col(KeyColumn)).as[Array[Byte], Row](Encoders.BINARY, Encoders.row(rows.schema))
        .flatMapGroups(build)(Encoders.tuple(Encoders.BINARY, Encoders.BINARY))
        .groupByKey(_._1)(Encoders.BINARY).mapValues(_._2)(Encoders.BINARY)
    }
    val function = new JoinLookupFunction(p, metrics)
    val (state, out) = (Encoders.BINARY, Encoders.row(outputSchema))
    initial match {
      case Some(i) =>
        keys.flatMapGroupsWithState(OutputMode.Append(), GroupStateTimeout.NoTimeout(), i)(function)(state, out)
      case None => keys.flatMapGroupsWithState(OutputMode.Append(), GroupStateTimeout.NoTimeout())(function)(state, out)
    }
  }

  /**
   * The input of a lone windowed aggregation, through its map side ([[WindowAggregateMapSide]]: inputs evaluated,
   * records combined where the node spec says so), with the key as the chain groups it ([[MapSideRows]]).
   */
  private def mapSideInput(
      df: DataFrame,
      w: WindowedAggregateNodeSpec,
      a: WindowAggregateRequest,
      keys: Seq[String]
  ): DataFrame = {
    val m = w.mapSide.get
    // Resolved again against the input itself: the map side evaluates the aggregates' inputs as columns.
    val resolved = WindowAggregateResolver.resolve(df, a.aggregations, w.operator)
    if (!resolved.aggregates.map(_.layout).sameElements(m.aggregates.map(_.layout)))
      throw new IllegalStateException(s"${w.operator}: the aggregates resolve differently on the map side")
    // Event time crosses as epoch milliseconds; TIMESTAMP_NTZ as it is (microseconds).
    val eventTime = col(ColumnNames.quote(a.timestamp))
    val projected = df.select(
      (keys.map(k => col(ColumnNames.quote(k))) :+ (if (m.timestampNtz) eventTime else unix_millis(eventTime))) ++
        resolved.inputColumns: _*
    )
    val mapSide = WindowAggregateMapSide(
      projected.columns.toSeq.map(c => ExpressionColumns.expression(col(ColumnNames.quote(c)))),
      m
    )
    projected.select(ExpressionColumns.column(mapSide))
  }

  /** How long after its end a window of `w` can still change at the aggregation (1 ms more for inclusive ends). */
  private def closesAfter(w: WindowDefinition): Long = w match {
    case sw: SessionWindowDefinition => sw.gapMs + sw.graceMs + 1
    case other => other.graceMs + 1
  }

  /** Every step works on the chain's key (Kafka: no re-keying inside a sub-topology) and names its event time. */
  private def checkKeyAndTimestamp(
      step: ChainStep,
      schema: StructType,
      chainKey: Seq[String],
      i: Int,
      op: String
  ): Unit = {
    val (key, ts) = (step.key, step.timestamp)
    if (key == null || key.map(_.toLowerCase) != chainKey.map(_.toLowerCase)) {
      throw new IllegalArgumentException(
        s"$op: key is ${Option(key).map(_.mkString("[", ", ", "]")).orNull}, but the operators it follows use " +
          s"${chainKey.mkString("[", ", ", "]")}. Operators chained in one query keep one key (Kafka re-keys only " +
          "through a repartition topic): pass the same key columns, or write the result to a sink and re-key it " +
          "in a second query."
      )
    }
    InputColumns.index(schema, ts, "timestamp", op)
  }

  private def suppress(
      df: DataFrame,
      s: ChainSuppressRequest,
      first: Boolean,
      r: ChainResolution,
      chainKey: Seq[String],
      windowedInput: Boolean,
      perKey: Boolean,
      op: String
  ): SuppressNodeSpec = {
    if (!first && s.tombstone.isDefined) {
      throw new IllegalArgumentException(
        s"$op: tombstone applies to a chain's first operator only; below it deletions travel with the records " +
          "(e.g. a session aggregation's retractions). Drop the tombstone argument."
      )
    }
    val wallClock = s.clock == SuppressionClock.ProcessingTime
    val limit =
      if (!s.untilWindowCloses) s.spec.timeLimitMs
      else r.windowed match {
        case Some(w) =>
          // Kafka takes the close time from the windowed aggregation: end + grace (sessions: end + gap + grace).
          s.graceMs.foreach { g =>
            if (g != w.graceMs) {
              throw new IllegalArgumentException(
                s"$op: grace is $g ms, but the windowed aggregation it follows has grace ${w.graceMs} ms; after an " +
                  "aggregate_windowed in one query untilWindowCloses takes the close time from it. Drop grace, " +
                  "or pass the aggregation's."
              )
            }
          }
          w match {
            case sw: SessionWindowDefinition => sw.gapMs + sw.graceMs
            case other => other.graceMs
          }
        case None if first && windowedInput =>
          s.graceMs.getOrElse(throw SuppressRules.noGrace(op))
        case None => throw SuppressRules.notWindowed(op)
      }
    if (s.spillToDisk) SuppressRules.requireRocksDB(df, op)
    // Kafka names the buffer by its processor's name in errors ("<name> buffer exceeded its max capacity").
    val spec = s.spec.copy(timeLimitMs = limit)
    val schema = r.schema
    val keyIdx = chainKey.map(k => InputColumns.index(schema, k, "key", op)).toArray
    val tsIdx = InputColumns.index(schema, s.timestamp, "timestamp", op)
    // Kafka's entry size counts the key and the value: not the window (part of Kafka's windowed key), not the flags.
    val excluded = r.windowColumns ++ r.flag ++ s.tombstone
    val valueIdx = schema.indices.filterNot(j =>
      keyIdx.contains(j) || j == tsIdx ||
        excluded.exists(_.equalsIgnoreCase(schema.fields(j).name))
    ).toArray
    r.timestamp = s.timestamp
    r.table = true
    // A window's update waits in the buffer at most the time limit more (Kafka evicts in buffer-time order); on the
    // wall clock, for no bound in event time.
    r.closedAfterMs = if (wallClock) None else for (c <- r.closedAfterMs; sum = c + limit if sum >= c) yield sum
    SuppressNodeSpec(
      op,
      spec,
      s.untilWindowCloses,
      schema,
      keyIdx,
      valueIdx,
      s.sizeModel,
      wallClock,
      s.emitLate,
      samplesBuffer = !perKey
    )
  }

  private def aggregateInputs(
      df: DataFrame,
      aggregations: Seq[Column],
      schema: StructType,
      op: String
  ): AggregateInputs = {
    // The step's input exists only on the executors: resolve the aggregates against an empty frame of its schema.
    val shape = df.sparkSession.createDataFrame(java.util.Collections.emptyList[Row](), schema)
    val resolved = WindowAggregateResolver.resolve(shape, aggregations, op)
    val attributes = shape.queryExecution.analyzed.output
    // The inputs as analysed expressions over the frame's columns, bound to the row positions the executors see.
    val analyzed = shape.select(resolved.inputColumns: _*).queryExecution.analyzed match {
      case Project(list, _) => list
      case other => throw new IllegalStateException(s"$op: unexpected plan for the aggregate inputs: ${other.nodeName}")
    }
    val bound: Array[Expression] = analyzed.map { e =>
      val unaliased = e match {
        case Alias(child, _) => child
        case other => other
      }
      BindReferences.bindReference(unaliased: Expression, attributes)
    }.toArray
    new AggregateInputs(resolved.aggregates, bound, resolved.inputSchema, schema)
  }

  private def windowedAggregate(
      df: DataFrame,
      a: WindowAggregateRequest,
      r: ChainResolution,
      keySchema: StructType,
      alone: Boolean,
      op: String
  ): WindowedAggregateNodeSpec = {
    if (r.windowed.isDefined) {
      throw new IllegalArgumentException(
        s"$op: its input is already windowed (by the aggregate_windowed before it); windowing windowed results again " +
          "is not supported in a chain. Aggregate the raw records instead."
      )
    }
    val definition = a.definition
    val retractions = a.mode == EmitMode.OnWindowUpdate && definition.isInstanceOf[SessionWindowDefinition]
    val timeType = r.schema(InputColumns.index(r.schema, a.timestamp, "timestamp", op)).dataType
    val inputs = aggregated(
      df,
      a.aggregations,
      a.timestamp,
      r,
      keySchema,
      op,
      window = Seq(StructField(
        ColumnNames.Window,
        StructType(Seq(StructField("start", timeType), StructField("end", timeType))),
        nullable = true
      )),
      flag =
        if (retractions) Seq(StructField(ColumnNames.Retraction, BooleanType, nullable = true)) else Nil
    )
    r.windowed = Some(definition)
    r.closedAfterMs = Some(closesAfter(definition))
    // A physical choice: alone, the aggregation's inputs are evaluated before the shuffle, where time windows with
    // final results and built-in aggregates also combine each input partition's records per key and window (a late
    // row aggregates one record: no combining).
    val mapSide =
      if (!alone) None
      else Some(MapSideParams(
        definition,
        combines = definition.isInstanceOf[TimeWindowDefinition] && a.mode == EmitMode.OnWindowClose &&
          !a.emitLate && !inputs.aggregates.exists(_.isInstanceOf[TypedAggregateColumn]),
        inputs.aggregates,
        keySchema,
        inputs.inputsSchema,
        timeType == TimestampNTZType,
        df.sparkSession.conf.getOption(MapSideParams.CombineCheckConf).map(_.toInt)
          .getOrElse(MapSideParams.DefaultCombineCheck),
        EarlyClose.delayMs(df, InputColumns.index(df.schema, a.timestamp, "timestamp", op))
      ))
    val fingerprint = (definition.toString + "|" + inputs.aggregates.map(_.layout).mkString(",") + "|" +
      keySchema.fields.map(_.dataType.simpleString).mkString(",")).hashCode.toLong
    WindowedAggregateNodeSpec(
      op,
      definition,
      a.mode,
      inputs,
      keySchema.length,
      retractions,
      a.emitLate,
      timeType == TimestampNTZType,
      fingerprint,
      mapSide
    )
  }

  private def keyAggregate(
      df: DataFrame,
      a: KeyAggregateRequest,
      r: ChainResolution,
      keySchema: StructType,
      op: String
  ): NodeSpec = {
    if (r.windowed.isDefined) {
      throw new IllegalArgumentException(
        s"$op: its input is windowed (by the aggregate_windowed before it); a non-windowed aggregate would fold " +
          "different windows together. Aggregate the raw records instead, or suppress the windowed results."
      )
    }
    val inputs = aggregated(df, a.aggregations, a.timestamp, r, keySchema, op, window = Nil, flag = Nil)
    r.closedAfterMs = None
    KeyAggregateNodeSpec(op, inputs, keySchema.length)
  }

  /**
   * An aggregation's inputs, resolved against the rows before it; its output (the key columns, `window`, the
   * aggregates, the event-time column and `flag`) becomes the resolution's schema.
   */
  private def aggregated(
      df: DataFrame,
      aggregations: Seq[Column],
      timestamp: String,
      r: ChainResolution,
      keySchema: StructType,
      op: String,
      window: Seq[StructField],
      flag: Seq[StructField]
  ): AggregateInputs = {
    val inputs = aggregateInputs(df, aggregations, r.schema, op)
    val tsField = r.schema.fields(InputColumns.index(r.schema, timestamp, "timestamp", op))
    r.schema = outputSchema(
      keySchema,
      window ++ inputs.aggregates.map(g => StructField(g.name, g.resultType, nullable = true)) ++
        Seq(StructField(tsField.name, tsField.dataType, nullable = true)) ++ flag,
      op
    )
    r.timestamp = timestamp
    r.table = true
    r.flag = flag.headOption.map(_.name)
    r.windowColumns = window.map(_.name)
    inputs
  }

  private def outputSchema(keySchema: StructType, rest: Seq[StructField], op: String): StructType = {
    val s = StructType(keySchema.fields.map(_.copy(nullable = true)).toSeq ++ rest)
    s.fieldNames.groupBy(_.toLowerCase).collectFirst { case (_, ns) if ns.length > 1 => ns.head }.foreach { c =>
      throw new IllegalArgumentException(
        s"$op: the output would have two columns named '$c' (its columns are the keys, the window, the aggregates, " +
          s"the event-time column and its flags: ${s.fieldNames.map(n => s"'$n'").mkString(", ")}). Give the " +
          "aggregate another alias, or rename the column before the operator."
      )
    }
    s
  }
}
