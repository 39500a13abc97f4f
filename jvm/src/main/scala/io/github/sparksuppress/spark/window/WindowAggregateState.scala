package io.github.sparksuppress.spark.window

import io.github.sparksuppress.core._
import io.github.sparksuppress.spark.common._

/**
 * The stored state of one key of a windowed aggregation:
 *
 * {{{
 *   format (1 byte) | operator name (bytes, empty when unnamed) | fingerprint (zig-zag)
 *   | [format 2: the idle clock (IdleClock.write)]
 *   | open windows (KeyWindowsCodec, buffers by AggregateBuffers.stateCodec)
 * }}}
 *
 * The format byte lets a later version refuse or migrate old state; the name guards against loading another named
 * operator's state; the fingerprint (windows, aggregates, key types) against reading buffers written for other
 * aggregates or window sizes, which would silently mean something else. The key itself is Spark's grouping key of the
 * state row, so it is not stored again. Format 2 is written only with an idle timeout, so checkpoints of operators
 * without one keep format 1; either reads with the option on or off.
 */
private[spark] object WindowAggregateState {
  val Format: Int = 1
  val IdleFormat: Int = 2

  def write(
      p: WindowAggregateParams,
      windows: KeyWindows[AggregateBuffer],
      buffers: AggregateBuffers,
      clock: Option[IdleClock] = None
  ): Array[Byte] = {
    val out = new ByteWriter(64 + windows.size * 32)
    StateHeader.write(out, if (clock.isDefined) IdleFormat else Format, p.explicitName)
    out.writeZigZag(p.fingerprint)
    clock.foreach(IdleClock.write(_, out))
    KeyWindowsCodec.write(windows, p.definition, out, buffers.stateCodec)
    out.toByteArray
  }

  /** The key's open windows and, when the operator has an idle timeout, its idle clock. */
  def read(
      bytes: Array[Byte],
      p: WindowAggregateParams,
      buffers: AggregateBuffers
  ): (KeyWindows[AggregateBuffer], Option[IdleClock]) = {
    val operator = s"aggregate_windowed '${p.operatorName}'"
    val in = new ByteReader(bytes)
    StateHeader.decoding(in, operator, "state") {
      val format = StateHeader.readAny(in, Seq(Format, IdleFormat), p.explicitName, operator, "state")
      if (in.readZigZag() != p.fingerprint) {
        throw new IllegalStateException(
          s"$operator: the checkpoint's state was written for other windows, aggregations or key types than this " +
            "query now has, and would be misread. Restore the original windows and aggregations, or start from a " +
            "new checkpoint (open windows would be lost)."
        )
      }
      val clock = IdleClock.readStored(format == IdleFormat, p.idleTimeoutMs, in)
      (KeyWindowsCodec.read(in, p.definition, buffers.stateCodec), clock)
    }
  }
}
