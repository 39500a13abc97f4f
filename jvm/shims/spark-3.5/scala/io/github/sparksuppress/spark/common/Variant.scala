package io.github.sparksuppress.spark.common

import org.apache.spark.sql.types.DataType

// Spark 4.0 added the VARIANT type (shims/spark-4.0-up); Spark 3.5 has none, so no column is one.
private[sparksuppress] object Variant {
  val dataType: Option[DataType] = None

  def unapply(t: DataType): Boolean = false

  def value(v: Any): Array[Byte] = unsupported

  def metadata(v: Any): Array[Byte] = unsupported

  def apply(value: Array[Byte], metadata: Array[Byte]): Any = unsupported

  private def unsupported: Nothing = throw new UnsupportedOperationException("Spark 3.5 has no VARIANT type")
}
