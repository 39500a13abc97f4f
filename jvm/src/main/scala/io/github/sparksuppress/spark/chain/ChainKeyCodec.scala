package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core.{ByteReader, ByteWriter, Codec}
import io.github.sparksuppress.spark.common.RowCodec

/**
 * Stores a [[ChainKey]]: its bytes, then its column values. Where a chain's state is per key, Spark's group is the
 * key already: [[ofKey]] stores nothing of it (format 7 of [[ChainState]]), and [[ofGroup]] reads state that stored
 * its values alone (format 6).
 */
final class ChainKeyCodec private (
    keySchema: StructType,
    group: Array[Byte],
    shared: RowCodec,
    bare: Boolean,
    key: ChainKey
) extends Codec[ChainKey]
    with Serializable {

  def this(keySchema: StructType) = this(keySchema, null, null, false, null)

  @transient private lazy val rows = if (shared != null) shared else new RowCodec(keySchema)

  /** The codec of state that belongs to one key, whose bytes are `group`: every key it stores is that key. */
  def ofGroup(group: Array[Byte]): ChainKeyCodec = new ChainKeyCodec(keySchema, group, rows, false, null)

  /**
   * The codec of state that belongs to `key` (null for a group Kafka reads as the null key, whose state holds no
   * key): every key it stores is that key, and it stores nothing of it.
   */
  def ofKey(key: ChainKey): ChainKeyCodec = new ChainKeyCodec(keySchema, null, rows, true, key)

  def write(out: ByteWriter, k: ChainKey): Unit =
    if (bare) groupKey(k)
    else {
      if (group == null) out.writeBytes(k.bytes)
      rows.writeRow(out, k.values)
    }

  def read(in: ByteReader): ChainKey =
    if (bare) groupKey(key)
    else new ChainKey(if (group == null) in.readBytes() else group, rows.readRow(in))

  // Per-key state can only ever hold its group's key: any other would be lost, so it fails instead.
  private def groupKey(k: ChainKey): ChainKey = {
    if (key == null || k == null || !java.util.Arrays.equals(k.bytes, key.bytes))
      throw new IllegalStateException(s"malformed state: a key ($k) other than its group's ($key) in per-key state")
    key
  }
}
