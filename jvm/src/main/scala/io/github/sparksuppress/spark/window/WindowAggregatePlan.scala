package io.github.sparksuppress.spark.window

import org.apache.spark.sql.{DataFrame, Encoders, Row}
import org.apache.spark.sql.catalyst.encoders.{ExpressionEncoder, RowEncoder}
import org.apache.spark.sql.functions.{col, count, lit, unix_millis}
import org.apache.spark.sql.sparksuppress.ExpressionColumns
import org.apache.spark.sql.streaming.{GroupStateTimeout, OutputMode}
import org.apache.spark.sql.types._

import io.github.sparksuppress.RuntimeCompatibility
import io.github.sparksuppress.core.{EmitMode, TimeWindowDefinition}
import io.github.sparksuppress.spark.common._

/**
 * Builds the Spark plan of a windowed aggregation ([[WindowAggregateRequest]]): checks the input on the driver,
 * resolves the aggregates, evaluates their inputs, runs the map side ([[WindowAggregateMapSide]]) on each input
 * partition, groups by key and calls `flatMapGroupsWithState` with a [[WindowAggregateFunction]].
 */
private[sparksuppress] object WindowAggregatePlan {
  val WindowColumn = "window"
  val RetractionColumn = "retraction"
  val LateColumn: String = ColumnNames.Late

  def build(df: DataFrame, a: WindowAggregateRequest): DataFrame = {
    RuntimeCompatibility.check()
    val name = a.name
    val operator = s"aggregate_windowed '$name'"
    InputColumns.requireStreaming(df, "the input", operator)
    InputColumns.requireNoUpstreamStatefulOperator(df, operator)
    if (a.key == null || a.key.isEmpty)
      throw new IllegalArgumentException(s"$operator: key must name at least one column.")
    InputColumns.distinct(a.key, "key", operator)

    val schema = InputColumns.operatorSchema(df.schema, nullable = false, "the input", operator)
    val keyIdx = a.key.map(k => InputColumns.index(schema, k, "key", operator)).toArray
    keyIdx.foreach { i =>
      KeyEncoding.requireGroupable(schema.fields(i).dataType, schema.fields(i).name)
    }
    val tsIdx = InputColumns.index(schema, a.timestamp, "timestamp", operator)
    InputColumns.requireTimestamp(schema, tsIdx, "timestamp", operator)
    if (keyIdx.contains(tsIdx)) {
      throw new IllegalArgumentException(
        s"$operator: key column '${schema.fields(tsIdx).name}' is also the event-time column."
      )
    }
    InputColumns.requireWatermark(df, "the input", a.timestamp, operator)

    val resolved = WindowAggregateResolver.resolve(df, a.aggregations, operator)
    val definition = a.definition
    val mode = a.mode
    val keySchema = StructType(keyIdx.map(schema.fields))
    val groupSchema =
      StructType(keySchema.fields.map(f => if (f.dataType == StringType) f.copy(dataType = BinaryType) else f))
    val tsField = schema.fields(tsIdx)
    val timeType = tsField.dataType
    val typed = resolved.aggregates.exists(_.isInstanceOf[TypedAggregateColumn])
    val params = WindowAggregateParams(
      operatorName = name,
      explicitName = a.explicitName,
      definition = definition,
      mode = mode,
      aggregates = resolved.aggregates,
      keySchema = keySchema,
      groupSchema = groupSchema,
      inputSchema = resolved.inputSchema,
      // A late row aggregates one record, so records cannot be combined before the shuffle.
      precombine =
        definition.isInstanceOf[TimeWindowDefinition] && mode == EmitMode.OnWindowClose && !typed && !a.emitLate,
      timestampNtz = timeType == TimestampNTZType,
      fingerprint = (definition.toString + "|" + resolved.aggregates.map(_.layout).mkString(",") + "|" +
        keySchema.fields.map(_.dataType.simpleString).mkString(",")).hashCode.toLong,
      emitLate = a.emitLate,
      idleTimeoutMs = a.idleTimeoutMs,
      combineCheck = df.sparkSession.conf.getOption(WindowAggregateParams.CombineCheckConf).map(_.toInt)
        .getOrElse(WindowAggregateParams.DefaultCombineCheck)
    )

    val outputSchema = StructType(
      keySchema.fields.toSeq ++
        Seq(StructField(
          WindowColumn,
          StructType(Seq(StructField("start", timeType), StructField("end", timeType))),
          nullable = false
        )) ++
        resolved.aggregates.map(g => StructField(g.name, g.resultType, nullable = true)) ++
        Seq(StructField(tsField.name, timeType, nullable = false)) ++
        (if (params.retractions) Seq(StructField(RetractionColumn, BooleanType, nullable = false)) else Nil) ++
        (if (params.emitLate) Seq(StructField(LateColumn, BooleanType, nullable = false)) else Nil)
    )
    val clash = outputSchema.fieldNames.groupBy(_.toLowerCase).collectFirst { case (_, ns) if ns.length > 1 => ns.head }
    clash.foreach { c =>
      throw new IllegalArgumentException(
        s"$operator: the output would have two columns named '$c' (its columns are the keys, '$WindowColumn', the " +
          s"aggregates, the event-time column '${tsField.name}'" + (if (params.retractions) s", '$RetractionColumn'"
                                                                    else "") +
          (if (params.emitLate) s", '$LateColumn'" else "") +
          "). Give the aggregate another alias, or rename the column before the operator."
      )
    }

    val op = OperatorMetricNames.windowedAggregation(df.sparkSession, name)

    // Event time crosses as epoch milliseconds; TIMESTAMP_NTZ as it is (microseconds).
    val eventTime = col(ColumnNames.quote(tsField.name))
    val keyColumns = keySchema.fieldNames.toSeq.map(n => col(ColumnNames.quote(n)))
    val projected = df.select(
      (keyColumns :+ (if (params.timestampNtz) eventTime else unix_millis(eventTime))) ++ resolved.inputColumns: _*
    )
    val mapSide = WindowAggregateMapSide(
      projected.columns.toSeq.map(c => ExpressionColumns.expression(col(ColumnNames.quote(c)))),
      params
    )
    val mapped = projected.select(ExpressionColumns.column(mapSide))
    val anchored = mapped.select(mapped.columns.toSeq.map(c => col(ColumnNames.quote(c))) :+ WatermarkBypass.anchor: _*)
    val fn = new WindowAggregateFunction(params, op.accumulator)
    // With an idle timeout, keys are called on the wall clock (one timeout kind per operator): docs/emit.md.
    val timeout =
      if (a.idleTimeoutMs.isDefined) GroupStateTimeout.ProcessingTimeTimeout() else GroupStateTimeout.EventTimeTimeout()
    // Grouped by the key columns themselves: Spark's own grouping, and the state row's key is the key.
    val out = anchored
      .groupBy(keySchema.fieldNames.toSeq.map(n => col(ColumnNames.quote(n))): _*)
      .as[Row, Row](Encoders.row(groupSchema), Encoders.row(anchored.schema))
      .flatMapGroupsWithState(OutputMode.Append(), timeout)(fn)(
        Encoders.BINARY,
        ExpressionEncoder(RowEncoder.encoderFor(outputSchema, lenient = true))
      )
    out.observe(op.observationName, count(lit(1)).as("emitted"))
  }
}
