package io.github.sparksuppress.spark.join

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.spark.common.InputColumns

/** The rules for a join's initial versions: a static DataFrame with the changelog's columns and types. */
private[sparksuppress] object InitialVersionColumns {

  /** The initial versions' name of each table column (matched as the changelog's are), checked for its type. */
  def named(versions: DataFrame, table: TableColumns, tableSchema: StructType, operator: String)
      : Map[String, String] = {
    if (versions.isStreaming) {
      throw new IllegalArgumentException(
        s"$operator: initialVersions must be a static DataFrame (e.g. spark.read...), but it is streaming."
      )
    }
    table.all.map { n =>
      val f = versions.schema.fields(InputColumns.index(versions.schema, n, "initialVersions column", operator))
      val expected = tableSchema(n).dataType
      if (f.dataType != expected) {
        throw new IllegalArgumentException(
          s"$operator: initialVersions column '$n' is ${f.dataType.simpleString} but the changelog's is " +
            s"${expected.simpleString}; the initial versions need the changelog's columns and types."
        )
      }
      n -> f.name
    }.toMap
  }

  /** Every initial version needs an event time, as every changelog row does. */
  def nullTimestamp(operator: String): IllegalStateException = new IllegalStateException(
    s"$operator: an initial version has a null timestamp; every version needs one. Filter such rows out (or fill " +
      "them) in the initialVersions DataFrame."
  )
}
