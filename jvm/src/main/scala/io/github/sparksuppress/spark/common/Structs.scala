package io.github.sparksuppress.spark.common

import org.apache.spark.sql.Column
import org.apache.spark.sql.functions.{lit, struct, when}

/** Struct columns the operators build from their inputs' columns. */
private[sparksuppress] object Structs {

  /**
   * `struct(columns)`, which may have no fields (a table without value columns); such a struct is typed nullable.
   * Spark 3.5 cannot build a DataFrame with a non-nullable struct column without fields (its row encoder asserts
   * "each serializer expression should contain at least one `BoundReference`").
   */
  def of(columns: Seq[Column]): Column = if (columns.nonEmpty) struct(columns: _*) else when(lit(true), struct())
}
