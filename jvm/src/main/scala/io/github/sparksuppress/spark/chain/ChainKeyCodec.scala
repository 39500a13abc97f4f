package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core.{ByteReader, ByteWriter, Codec}
import io.github.sparksuppress.spark.common.RowCodec

/** Stores a [[ChainKey]]: its bytes, then its column values. */
final class ChainKeyCodec(keySchema: StructType) extends Codec[ChainKey] with Serializable {
  @transient private lazy val rows = new RowCodec(keySchema)

  def write(out: ByteWriter, k: ChainKey): Unit = {
    out.writeBytes(k.bytes)
    rows.writeRow(out, k.values)
  }

  def read(in: ByteReader): ChainKey = {
    val bytes = in.readBytes()
    new ChainKey(bytes, rows.readRow(in))
  }
}
