package io.github.sparksuppress.spark.common

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.plans.logical.{EventTimeWatermark, Join}
import org.apache.spark.sql.types.{BooleanType, DataType, StructType, TimestampNTZType, TimestampType}

/** Finding and checking the columns an operator is given, with errors that name the parameter and the fix. */
private[sparksuppress] object InputColumns {

  /** Index of column `name` in `schema`: exact match first, then a unique case-insensitive one. */
  def index(schema: StructType, name: String, parameter: String, operator: String): Int = {
    if (name == null || name.isEmpty) throw new IllegalArgumentException(s"$operator: $parameter must name a column.")
    val exact = schema.fieldNames.indexOf(name)
    if (exact >= 0) exact
    else {
      val matches = schema.fieldNames.zipWithIndex.filter(_._1.equalsIgnoreCase(name))
      matches.length match {
        case 1 => matches.head._2
        case 0 =>
          throw new IllegalArgumentException(
            s"$operator: $parameter '$name' is not a column of the input; columns are " +
              s"${schema.fieldNames.mkString("['", "', '", "']")}."
          )
        case _ =>
          throw new IllegalArgumentException(
            s"$operator: $parameter '$name' is ambiguous: it matches " +
              s"${matches.map(_._1).mkString("'", "', '", "'")}; use the exact name."
          )
      }
    }
  }

  def requireType(
      schema: StructType,
      i: Int,
      parameter: String,
      operator: String,
      ok: DataType => Boolean,
      expected: String
  ): Unit = {
    val f = schema.fields(i)
    if (!ok(f.dataType)) {
      throw new IllegalArgumentException(
        s"$operator: $parameter column '${f.name}' must be $expected, but it is ${f.dataType.simpleString}."
      )
    }
  }

  def isTimestamp(t: DataType): Boolean = t == TimestampType || t == TimestampNTZType

  def requireTimestamp(schema: StructType, i: Int, parameter: String, operator: String): Unit =
    requireType(schema, i, parameter, operator, isTimestamp, "a timestamp (TimestampType)")

  def requireBoolean(schema: StructType, i: Int, parameter: String, operator: String): Unit =
    requireType(schema, i, parameter, operator, _ == BooleanType, "a boolean")

  def requireStreaming(df: DataFrame, parameter: String, operator: String): Unit = {
    if (df == null) throw new IllegalArgumentException(s"$operator: $parameter must not be null.")
    if (!df.isStreaming) {
      throw new IllegalArgumentException(
        s"$operator: $parameter is not a streaming DataFrame. spark-suppress operators run on streams (read with " +
          "spark.readStream); to try a pipeline on fixed data, feed it through spark_suppress.testing.TestDriver."
      )
    }
  }

  /**
   * The input must have an event-time watermark somewhere upstream: event-time operators take stream time from it.
   */
  def requireWatermark(df: DataFrame, parameter: String, timestamp: String, operator: String): Unit = {
    val hasWatermark = df.queryExecution.analyzed.exists(_.isInstanceOf[EventTimeWatermark]) ||
      df.schema.fields.exists(_.metadata.contains(EventTimeWatermark.delayKey))
    if (!hasWatermark) {
      throw new IllegalArgumentException(
        s"$operator: $parameter has no event-time watermark; stream time comes from it. Add one before the operator, " +
          s"""e.g. df.withWatermark("$timestamp", "0 seconds") for Kafka's exact timing (a larger delay adds """ +
          "lateness allowance on top of the grace period)."
      )
    }
  }

  /**
   * Event-time operators cannot follow another stateful operator in the same query: Spark keeps one watermark per
   * query, and a stateful operator passes none downstream (Spark refuses such queries when they start, or, with its
   * check disabled, the downstream operator's timers stop advancing). Say so when the operator is built.
   */
  def requireNoUpstreamStatefulOperator(df: DataFrame, operator: String): Unit = {
    val stateful = df.queryExecution.analyzed.collectFirst {
      case j: Join if j.left.isStreaming && j.right.isStreaming => "a stream-stream join"
      case p if p.isStreaming && StatefulNodeNames.contains(p.nodeName) => p.nodeName
    }
    stateful.foreach { name =>
      throw new IllegalArgumentException(
        s"$operator: its input already contains a stateful streaming operator ($name). Spark keeps one event-time " +
          "watermark per query and stateful operators pass none downstream, so an event-time operator cannot follow " +
          s"another in the same query. ${insteadOf(name)}"
      )
    }
  }

  /** What to use instead of the upstream stateful operator `name`, so that the two run in one query. */
  private def insteadOf(name: String): String = {
    val chain = "Operators of this library applied to each other's output, directly or through where/select steps " +
      "that keep the key and timestamp, run fused in one query (docs/chains.md)."
    val rest =
      " Otherwise write the upstream result to a sink (e.g. a Kafka topic or table) and read it with a second " +
        "query that applies this operator."
    name match {
      case "Aggregate" =>
        "Instead of Spark's groupBy().agg(), use this library's aggregate (non-windowed, Kafka's KTable aggregation) " +
          s"or aggregate_windowed (windowed, with grace and emit strategy) on the raw stream. $chain$rest"
      case "FlatMapGroupsWithState" | "TransformWithState" =>
        "If it is an operator of this library (suppress, aggregate, aggregate_windowed, join_versioned), apply this " +
          s"operator to its output, with at most where/select steps in between. $chain$rest"
      case "a stream-stream join" =>
        s"For a stream-table join with a grace period use this library's join_versioned. $chain$rest"
      case _ => rest.trim
    }
  }

  private val StatefulNodeNames = Set(
    "Aggregate",
    "Deduplicate",
    "DeduplicateWithinWatermark",
    "FlatMapGroupsWithState",
    "FlatMapGroupsInPandasWithState",
    "TransformWithState",
    "TransformWithStateInPySpark"
  )

  /** Prefix of the columns the operators add to their input internally. */
  val ReservedPrefix = "__spark_suppress_"

  /**
   * An input's schema as an operator works with it: without Spark's watermark markers (see [[WatermarkBypass]]),
   * every column nullable when `nullable` (operators that store rows: a row stored before a column was added comes
   * back with it null), and refused if a column is named like an internal one, which would be ambiguous inside the
   * operator's plan.
   */
  def operatorSchema(schema: StructType, nullable: Boolean, parameter: String, operator: String): StructType = {
    schema.fieldNames.find(_.toLowerCase.startsWith(ReservedPrefix)).foreach { n =>
      throw new IllegalArgumentException(
        s"$operator: $parameter has a column named '$n'; names starting with '$ReservedPrefix' are reserved for " +
          s"""the operator's internal columns. Rename it first, e.g. withColumnRenamed("$n", "${n.substring(
              ReservedPrefix.length
            )}")."""
      )
    }
    StructType(schema.fields.map(f =>
      f.copy(nullable = nullable || f.nullable, metadata = WatermarkBypass.withoutMarker(f.metadata))
    ))
  }

  def distinct(names: Seq[String], parameter: String, operator: String): Unit = {
    val dup = names.groupBy(_.toLowerCase).collect { case (_, vs) if vs.size > 1 => vs.head }
    if (dup.nonEmpty) throw new IllegalArgumentException(
      s"$operator: $parameter lists ${dup.mkString("'", "', '", "'")} more than once."
    )
  }
}
