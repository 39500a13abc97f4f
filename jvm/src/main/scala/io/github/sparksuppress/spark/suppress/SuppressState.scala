package io.github.sparksuppress.spark.suppress

import org.apache.spark.sql.Row

import io.github.sparksuppress.core._
import io.github.sparksuppress.spark.common._

/**
 * The stored form of one group's suppression buffer (a single key, or all keys of a shard):
 *
 * {{{
 *   format (1 byte) | operator name (bytes, empty when unnamed) | run epoch (zig-zag)
 *   | [format 2: the idle clock (IdleClock.write)] | row schema descriptor | buffer entries (SuppressionBufferCodec)
 * }}}
 *
 * The format byte lets a future version refuse or migrate old state with a clear message; the name guards against
 * loading another named operator's state; the epoch tells metrics whether an entry was buffered before this run of
 * the query; the descriptor lets buffered rows survive added or dropped columns. Format 2 is written only with an
 * idle timeout, so checkpoints of operators without one keep format 1; either reads with the option on or off (a
 * clock missing from format 1 starts afresh, a stored one is skipped when the option is off).
 */
private[spark] object SuppressState {
  val Format: Int = 1
  val IdleFormat: Int = 2

  def write(
      buffer: SuppressionBuffer[Array[Byte], Row],
      name: Option[String],
      epoch: Long,
      rows: RowCodec,
      clock: Option[IdleClock] = None
  ): Array[Byte] = {
    val out = new ByteWriter(64 + buffer.numRecords * 64)
    StateHeader.write(out, if (clock.isDefined) IdleFormat else Format, name)
    out.writeZigZag(epoch)
    clock.foreach(IdleClock.write(_, out))
    rows.writeDescriptor(out)
    SuppressionBufferCodec.write(buffer, out)(Codec.bytes, RowValues.writing(rows))
    out.toByteArray
  }

  /** Restores `into`; returns the run epoch and, when `idleTimeoutMs` is set, the group's idle clock. */
  def read(
      bytes: Array[Byte],
      into: SuppressionBuffer[Array[Byte], Row],
      name: Option[String],
      operator: String,
      rows: RowCodec,
      idleTimeoutMs: Option[Long] = None
  ): (Long, Option[IdleClock]) = {
    val in = new ByteReader(bytes)
    StateHeader.decoding(in, operator, "state") {
      val format = StateHeader.readAny(in, Seq(Format, IdleFormat), name, operator, "state")
      val epoch = in.readZigZag()
      val clock = IdleClock.readStored(format == IdleFormat, idleTimeoutMs, in)
      val rowReader = rows.readDescriptor(in)
      SuppressionBufferCodec.read(in, into)(Codec.bytes, RowValues.reading(rowReader))
      (epoch, clock)
    }
  }
}
