package io.github.sparksuppress.spark.common

import org.apache.spark.sql.types.{DataType, VariantType}
import org.apache.spark.unsafe.types.VariantVal

// Spark 4.0 added the VARIANT type; Spark 3.5 has none (shims/spark-3.5).

/** The VARIANT type and its values, for the codecs: `case Variant() =>` matches the type. */
private[sparksuppress] object Variant {

  /** The type where the line has it, for tests that cover every type. */
  val dataType: Option[DataType] = Some(VariantType)

  def unapply(t: DataType): Boolean = t == VariantType

  def value(v: Any): Array[Byte] = v.asInstanceOf[VariantVal].getValue

  def metadata(v: Any): Array[Byte] = v.asInstanceOf[VariantVal].getMetadata

  def apply(value: Array[Byte], metadata: Array[Byte]): Any = new VariantVal(value, metadata)
}
