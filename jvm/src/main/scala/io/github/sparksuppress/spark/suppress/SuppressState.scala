package io.github.sparksuppress.spark.suppress

import org.apache.spark.sql.Row

import io.github.sparksuppress.core._
import io.github.sparksuppress.spark.common._

/**
 * The stored form of one group's suppression buffer (a single key, or all keys of a shard):
 *
 * {{{
 *   format (1 byte) | operator name (bytes, empty when unnamed) | run epoch (zig-zag)
 *   | row schema descriptor | buffer entries (SuppressionBufferCodec)
 * }}}
 *
 * The format byte lets a future version refuse or migrate old state with a clear message; the name guards
 * against loading another named operator's state; the epoch tells metrics whether an entry was buffered before
 * this run of the query; the descriptor lets buffered rows survive added or dropped columns.
 */
private[spark] object SuppressState {
  val Format: Int = 1

  def write(buffer: SuppressionBuffer[Array[Byte], Row], name: Option[String], epoch: Long, rows: RowCodec): Array[Byte] = {
    val out = new ByteWriter(64 + buffer.numRecords * 64)
    StateHeader.write(out, Format, name)
    out.writeZigZag(epoch)
    rows.writeDescriptor(out)
    SuppressionBufferCodec.write(buffer, out)(Codec.bytes, RowValues.writing(rows))
    out.toByteArray
  }

  def read(
      bytes: Array[Byte],
      into: SuppressionBuffer[Array[Byte], Row],
      name: Option[String],
      operator: String,
      rows: RowCodec): Long = {
    val in = new ByteReader(bytes)
    StateHeader.read(in, Format, name, operator, "state")
    val epoch = in.readZigZag()
    val rowReader = rows.readDescriptor(in)
    SuppressionBufferCodec.read(in, into)(Codec.bytes, RowValues.reading(rowReader))
    epoch
  }
}
