package io.github.sparksuppress.api

import io.github.sparksuppress.spark.common.ColumnNames

/**
 * What an operator does with a record that comes after its window has closed. Kafka drops it and counts it
 * ([[LateRecords.Drop]], the default); [[LateRecords.Emit]] goes beyond Kafka: the record leaves in the operator's
 * output, marked by a boolean `late` column (true for late rows, false for every other row), which the output has
 * only under this option.
 */
sealed abstract class LateRecords(val name: String) extends Serializable {
  override def toString: String = s"LateRecords.${name.capitalize}"
}

object LateRecords {
  case object Drop extends LateRecords("drop")
  case object Emit extends LateRecords("emit")

  /** The name of the output column marking late rows. */
  val Column: String = ColumnNames.Late
}
