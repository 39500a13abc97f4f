package io.github.sparksuppress.spark.common

import org.apache.spark.sql.{Column, DataFrame}
import org.apache.spark.sql.catalyst.plans.logical.EventTimeWatermark
import org.apache.spark.sql.functions.{col, lit, timestamp_micros}
import org.apache.spark.sql.types.{Metadata, MetadataBuilder, StructField}

/**
 * The one place that works around how `flatMapGroupsWithState` treats the watermark (checked on Spark 4.3.0):
 *
 *   - With `EventTimeTimeout`, the operator silently drops every input row whose watermarked column is `<=` the
 *     previous batch's watermark before the user function sees it. Kafka's operators need those rows (a late record
 *     is buffered and evicted, or joined, at once), so no user column may keep the watermark marker.
 *   - The analyzer refuses `EventTimeTimeout` unless some input column carries the marker, and without one the
 *     operator cannot read the watermark at all.
 *
 * So every column loses the marker and one extra column carries it: a constant so far in the future that the late-row
 * filter never drops a row. The event-time watermark itself (tracked by the upstream `withWatermark` node) is
 * untouched. `SparkBehaviourProbeSuite` fails if a Spark upgrade changes any of this.
 *
 * The unmarked columns' metadata is never empty: Spark 3.5 and 4.0 treat an alias with empty metadata as one without
 * any, which keeps the child's metadata (the marker with it), so a key of our own stands in ([[UnmarkedKey]]). (On
 * 3.5 the analyzer's CleanupAliases makes such an alias inherit its child's metadata, and the optimizer's
 * RemoveRedundantAliases drops an alias to a column's own name whose metadata is empty.)
 */
private[sparksuppress] object WatermarkBypass {

  /** Name of the column that carries the watermark marker into the stateful operator. */
  val AnchorColumn = "__spark_suppress_watermark_anchor"

  private val delayKey = EventTimeWatermark.delayKey

  def hasMarker(field: StructField): Boolean = field.metadata.contains(delayKey)

  /** The metadata key that keeps an unmarked column's metadata non-empty (see above). */
  val UnmarkedKey = "spark_suppress.unwatermarked"

  def withoutMarker(metadata: Metadata): Metadata =
    if (!metadata.contains(delayKey)) metadata
    else new MetadataBuilder().withMetadata(metadata).remove(delayKey).build()

  /** The metadata of an unmarked column's alias: never empty, so no line keeps the child's marker (see above). */
  private def unmarkedAlias(metadata: Metadata): Metadata =
    if (!metadata.contains(delayKey)) metadata
    else new MetadataBuilder().withMetadata(withoutMarker(metadata)).putBoolean(UnmarkedKey, true).build()

  /** The anchor: the largest representable timestamp, marked as a watermarked column with zero delay. */
  def anchor: Column =
    timestamp_micros(lit(Long.MaxValue)).as(AnchorColumn, new MetadataBuilder().putLong(delayKey, 0L).build())

  /** `df` with the marker moved from its columns onto the anchor column (appended last). */
  def apply(df: DataFrame): DataFrame = {
    val columns = df.schema.fields.toSeq.map { f =>
      col(ColumnNames.quote(f.name)).as(f.name, unmarkedAlias(f.metadata))
    }
    df.select(columns :+ anchor: _*)
  }
}
