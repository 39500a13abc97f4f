package io.github.sparksuppress.spark.suppress

import org.apache.spark.sql.Column
import org.apache.spark.sql.types.{BooleanType, StructField, StructType}

import io.github.sparksuppress.spark.common.ColumnNames

/**
 * The rows of a stand-alone suppress. What its state function reads: the input's columns as they are, then the
 * encoded key and the arrival sequence (then, when the buffer is bounded, the shard it is grouped by). What it emits:
 * the input's columns, then, with late updates emitted, the `late` flag. One object builds the select list and names
 * the ordinals, so that the two cannot disagree.
 */
private[spark] final case class SuppressLayout(input: StructType) {
  private val user = input.length

  /** Ordinal of the encoded key in a row the function reads. */
  val Key: Int = user

  /** Ordinal of the arrival sequence in a row the function reads. */
  val Seq: Int = user + 1

  /** The columns the function reads, in the order of the ordinals above. */
  def columns(userColumns: scala.Seq[Column], key: Column, seq: Column): scala.Seq[Column] =
    userColumns ++ scala.Seq(key.as(SuppressLayout.KeyColumn), seq.as(SuppressLayout.SeqColumn))

  /** The output's schema: the input's, with the `late` flag when late updates leave flagged. */
  def outputSchema(flagsLate: Boolean): StructType =
    if (flagsLate) input.add(StructField(SuppressLayout.LateColumn, BooleanType, nullable = false)) else input
}

private[spark] object SuppressLayout {
  val KeyColumn = "__spark_suppress_key"
  val SeqColumn = "__spark_suppress_seq"
  val GroupColumn = "__spark_suppress_group"
  val LateColumn: String = ColumnNames.Late
}
