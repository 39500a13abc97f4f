package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.types.{BooleanType, StructField, StructType}

import io.github.sparksuppress.spark.common.ColumnNames

/**
 * Late rows in a chain (beyond Kafka: `late="emit"` in Python, `LateRecords.Emit` in Scala). Kafka drops a late
 * record where it is late, so the operators after that one never see it: here it passes them by and leaves the chain
 * as the row its operator made, flagged in the `late` column that every output row then has. The operators that can
 * follow one emitting late records (a suppress after a windowed aggregation, or after a suppress of windowed rows)
 * keep its columns; a `where` or `select` between them could not apply to the rows that pass it by.
 */
private[chain] object LateRows {
  val Column: String = ColumnNames.Late

  /** The output with the flag appended (false for every row but the late ones). */
  def flagged(output: StructType, chain: String): StructType = {
    output.fieldNames.find(_.equalsIgnoreCase(Column)).foreach { c =>
      throw new IllegalArgumentException(
        s"$chain: the output has a column named '$c', which flags late rows when late records are emitted. " +
          "Rename that column, or stop emitting late records."
      )
    }
    StructType(output.fields :+ StructField(Column, BooleanType, nullable = false))
  }

  /** Refuses a `where` or `select` after an operator that emits late records, naming both. */
  def requireNoStatelessStepAfter(steps: Seq[ChainStep], names: Seq[String]): Unit = {
    val firstLate = steps.indexWhere(ChainStep.emitsLate)
    if (firstLate >= 0) steps.zipWithIndex.drop(firstLate + 1).find(s => !ChainStep.isOperator(s._1)).foreach {
      case (_, i) =>
        throw new IllegalArgumentException(
          s"${names(firstLate)}: its emitted late records leave the chain as they are, past every later step, so " +
            s"the ${names(i)} after it could not apply to them. Apply it to the chain's output instead (it then " +
            "sees the late rows and their 'late' column too), or stop emitting late records."
        )
    }
  }
}
