package io.github.sparksuppress.spark.join

import org.apache.spark.sql.Row

import io.github.sparksuppress.core._
import io.github.sparksuppress.spark.common._

/**
 * The stored state of one shard of a stream-table join's sequencer: the table's observed stream time and the grace
 * buffer (with its stream time and the buffered stream rows).
 *
 * {{{
 *   header (StateHeader) | table time (zig-zag) | has buffer (byte) [| stream row descriptor | buffer entries]
 *     [| largest stream timestamp seen (zig-zag)] [| the idle clock (IdleClock.write)]
 * }}}
 *
 * The last fields came later: state written without the largest timestamp reads it as the buffer's stream time; the
 * idle clock is written only with an idle timeout, and state without it starts a fresh clock.
 */
private[spark] object JoinShardState {
  val Format: Int = 1

  def write(
      s: StreamTableSequencer[Array[Byte], Row, Row],
      name: Option[String],
      rows: RowCodec,
      clock: Option[IdleClock] = None
  ): Array[Byte] = {
    val out = new ByteWriter(64 + s.buffer.fold(0)(_.numRecords) * 64)
    StateHeader.write(out, Format, name)
    out.writeZigZag(s.tableTime.fold(TableStreamTime.None)(_.time))
    s.buffer match {
      case Some(b) =>
        out.writeByte(1)
        rows.writeDescriptor(out)
        GraceBufferCodec.write(b, out)(Codec.bytes, RowValues.writing(rows))
      case None => out.writeByte(0)
    }
    out.writeZigZag(s.streamSeen)
    clock.foreach(IdleClock.write(_, out))
    out.toByteArray
  }

  /** A shard that starts with a table time only (the largest timestamp of the table's initial versions). */
  def initial(tableTime: Long, name: Option[String]): Array[Byte] = {
    val out = new ByteWriter(32)
    StateHeader.write(out, Format, name)
    out.writeZigZag(tableTime)
    out.writeByte(0)
    out.toByteArray
  }

  /**
   * Restores stored state into a fresh sequencer; returns the shard's idle clock when `idleTimeoutMs` is set. A
   * buffer stored by a join that has no grace period any more is refused rather than dropped, since its records would
   * be lost.
   */
  def read(
      bytes: Array[Byte],
      into: StreamTableSequencer[Array[Byte], Row, Row],
      name: Option[String],
      operator: String,
      rows: RowCodec,
      idleTimeoutMs: Option[Long] = None
  ): Option[IdleClock] = {
    val in = new ByteReader(bytes)
    StateHeader.decoding(in, operator, "join state")(readShard(in, into, name, operator, rows, idleTimeoutMs))
  }

  private def readShard(
      in: ByteReader,
      into: StreamTableSequencer[Array[Byte], Row, Row],
      name: Option[String],
      operator: String,
      rows: RowCodec,
      idleTimeoutMs: Option[Long]
  ): Option[IdleClock] = {
    StateHeader.read(in, Format, name, operator, "join state")
    val tableTime = in.readZigZag()
    into.tableTime.foreach(_.advanceTo(tableTime))
    if (in.readByte() == 1) {
      val reader = rows.readDescriptor(in)
      into.buffer match {
        case Some(b) => GraceBufferCodec.read(in, b)(Codec.bytes, RowValues.reading(reader))
        case None =>
          val probe = new GraceBuffer[Array[Byte], Row](0)(KeyOps.bytes)
          GraceBufferCodec.read(in, probe)(Codec.bytes, RowValues.reading(reader))
          if (!probe.isEmpty) {
            throw new IllegalStateException(
              s"$operator: the checkpoint holds ${probe.numRecords} stream records waiting in the grace buffer, but " +
                "the join now has no grace period. Restart with the grace period it had, let the records drain, " +
                "or start from a new checkpoint (they would be lost)."
            )
          }
      }
    }
    into.streamSeen =
      if (in.remaining > 0) in.readZigZag() else into.buffer.fold(TableStreamTime.None)(_.streamTime)
    IdleClock.readStored(in.remaining > 0, idleTimeoutMs, in)
  }
}
