package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core.{ByteReader, ByteWriter, Codec}
import io.github.sparksuppress.spark.common.RowCodec

/**
 * Stores a [[ChainKey]]: its bytes, then its column values. Where a chain's state is per key, Spark's group is the
 * key's bytes already, and [[ofGroup]] stores the values alone (format 6 of [[ChainState]]).
 */
final class ChainKeyCodec private (keySchema: StructType, group: Array[Byte], shared: RowCodec)
    extends Codec[ChainKey]
    with Serializable {

  def this(keySchema: StructType) = this(keySchema, null, null)

  @transient private lazy val rows = if (shared != null) shared else new RowCodec(keySchema)

  /** The codec of state that belongs to one key, whose bytes are `group`: every key it stores is that key. */
  def ofGroup(group: Array[Byte]): ChainKeyCodec = new ChainKeyCodec(keySchema, group, rows)

  def write(out: ByteWriter, k: ChainKey): Unit = {
    if (group == null) out.writeBytes(k.bytes)
    rows.writeRow(out, k.values)
  }

  def read(in: ByteReader): ChainKey = {
    val bytes = if (group == null) in.readBytes() else group
    new ChainKey(bytes, rows.readRow(in))
  }
}
