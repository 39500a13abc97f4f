package io.github.sparksuppress.spark.common

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.catalyst.plans.logical.EventTimeWatermark
import org.apache.spark.sql.functions.{col, lit, timestamp_micros}
import org.apache.spark.sql.types.{Metadata, MetadataBuilder, StructField}

/**
 * The one place that works around how `flatMapGroupsWithState` treats the watermark (checked on Spark 4.3.0):
 *
 *  - With `EventTimeTimeout`, the operator silently drops every input row whose watermarked column is `<=` the
 *    previous batch's watermark before the user function sees it. Kafka's operators need those rows (a late
 *    record is buffered and evicted, or joined, at once), so no user column may keep the watermark marker.
 *  - The analyzer refuses `EventTimeTimeout` unless some input column carries the marker, and without one the
 *    operator cannot read the watermark at all.
 *
 * So every column loses the marker and one extra column carries it: a constant so far in the future that the
 * late-row filter never drops a row. The event-time watermark itself (tracked by the upstream `withWatermark`
 * node) is untouched. `SparkBehaviourProbeSuite` fails if a Spark upgrade changes any of this.
 *
 * A column loses the marker through an alias to its own name whose metadata lacks it. That metadata is never empty:
 * Spark 3.5 treats an alias with empty metadata as no alias, which keeps the marker (its analyzer's CleanupAliases
 * makes the alias inherit the column's metadata, its optimizer's RemoveRedundantAliases drops the alias).
 */
private[sparksuppress] object WatermarkBypass {

  /** Name of the column that carries the watermark marker into the stateful operator. */
  val AnchorColumn = "__spark_suppress_watermark_anchor"

  private val delayKey = EventTimeWatermark.delayKey

  /** Left on a column that lost the marker, so that its metadata is not empty (see above). */
  private val UnmarkedKey = "__spark_suppress_unmarked"

  def hasMarker(field: StructField): Boolean = field.metadata.contains(delayKey)

  def withoutMarker(metadata: Metadata): Metadata =
    if (!metadata.contains(delayKey)) metadata else new MetadataBuilder().withMetadata(metadata).remove(delayKey).build()

  /** The anchor: the largest representable timestamp, marked as a watermarked column with zero delay. */
  def anchor: Column =
    timestamp_micros(lit(Long.MaxValue)).as(AnchorColumn, new MetadataBuilder().putLong(delayKey, 0L).build())

  /** `df` with the marker moved from its columns onto the anchor column (appended last). */
  def apply(df: DataFrame): DataFrame = df.select(unmarkedColumns(df) :+ anchor: _*)

  /** `df` with no column carrying the marker. */
  def unmarked(df: DataFrame): DataFrame = df.select(unmarkedColumns(df): _*)

  private def unmarkedColumns(df: DataFrame): Seq[Column] = df.schema.fields.toSeq.map { f =>
    val c = col(ColumnNames.quote(f.name))
    if (!hasMarker(f)) c
    else c.as(f.name, new MetadataBuilder().withMetadata(withoutMarker(f.metadata)).putBoolean(UnmarkedKey, true).build())
  }
}
