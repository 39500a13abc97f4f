package io.github.sparksuppress.spark.chain

import io.github.sparksuppress.core.{ByteReader, ByteWriter, IdleClock}
import io.github.sparksuppress.core.chain.ChainNode
import io.github.sparksuppress.spark.common.StateHeader

/**
 * The stored state of one shard of a chain: every node's state and clock, in chain order, then (format 2, written
 * when a node has an idle timeout) every node's idle clock.
 *
 * {{{
 *   format (1 byte) | node count (varint) | per node: its operator kind (bytes) then its state (its NodeSpec)
 *   format 2 only:  | per node: 1 and its IdleClock's fields, or 0
 * }}}
 *
 * The kinds let a query restarted with a different chain fail with a clear message instead of misreading state.
 * Switching an idle timeout on or off across a restart keeps every node's state (a new clock starts, an old one is
 * skipped), as for the stand-alone operators.
 */
private[chain] object ChainState {
  val Format: Int = 1
  val FormatWithIdleClocks: Int = 2

  def write(
      p: ChainParams,
      nodes: IndexedSeq[ChainNode[ChainKey]],
      clocks: IndexedSeq[Option[IdleClock]]
  ): Array[Byte] = {
    val out = new ByteWriter(256)
    val withClocks = clocks.exists(_.isDefined)
    out.writeByte(if (withClocks) FormatWithIdleClocks else Format)
    out.writeVarLong(nodes.length.toLong)
    var i = 0
    while (i < nodes.length) {
      out.writeBytes(kind(p.nodes(i)).getBytes("UTF-8"))
      p.nodes(i).write(nodes(i), out, p.keys)
      i += 1
    }
    if (withClocks) clocks.foreach {
      case Some(c) => out.writeByte(1); IdleClock.write(c, out)
      case None => out.writeByte(0)
    }
    out.toByteArray
  }

  /** Restores `nodes` from `bytes` and returns each node's idle clock (`p.idleTimeouts`: restored, new or none). */
  def read(
      bytes: Array[Byte],
      p: ChainParams,
      nodes: IndexedSeq[ChainNode[ChainKey]]
  ): IndexedSeq[Option[IdleClock]] = {
    val in = new ByteReader(bytes)
    StateHeader.decoding(in, p.operator, "chain state") {
      val format = readNodes(in, p, nodes)
      nodes.indices.map { i =>
        IdleClock.readStored(format == FormatWithIdleClocks && in.readByte() == 1, p.idleTimeout(i), in)
      }
    }
  }

  /** Each node's idle clock in a shard without stored state. */
  def newClocks(p: ChainParams): IndexedSeq[Option[IdleClock]] =
    p.nodes.indices.map(p.idleTimeout(_).map(new IdleClock(_)))

  private def readNodes(in: ByteReader, p: ChainParams, nodes: IndexedSeq[ChainNode[ChainKey]]): Int = {
    val format = in.readByte()
    if (format != Format && format != FormatWithIdleClocks) {
      throw new IllegalStateException(
        s"${p.operator}: the checkpoint holds chain state of format $format; this spark-suppress reads formats " +
          s"$Format and $FormatWithIdleClocks. " +
          "Restart from a checkpoint written by a compatible version, or with a new checkpoint location."
      )
    }
    val stored = in.readVarLong().toInt
    val kinds = (0 until stored).map { i =>
      val k = new String(in.readBytes(), "UTF-8")
      if (i < nodes.length && k == kind(p.nodes(i))) p.nodes(i).read(in, nodes(i), p.keys)
      else {
        throw new IllegalStateException(
          s"${p.operator}: the checkpoint was written by a different chain (its step ${i + 1} is $k, this query's is " +
            s"${if (i < nodes.length) kind(p.nodes(i)) else "missing"}). A chain's steps cannot change across " +
            s"restarts; " +
            "start the changed query with a new checkpoint location."
        )
      }
      k
    }
    if (kinds.length != nodes.length) {
      throw new IllegalStateException(
        s"${p.operator}: the checkpoint was written by a chain of ${kinds.length} steps, this query has " +
          s"${nodes.length}. " +
          "A chain's steps cannot change across restarts; start the changed query with a new checkpoint location."
      )
    }
    format
  }

  private def kind(n: NodeSpec): String = n match {
    case _: SuppressNodeSpec => "suppress"
    case _: WindowedAggregateNodeSpec => "aggregate_windowed"
    case _: KeyAggregateNodeSpec => "aggregate"
    case _: JoinNodeSpec => "join_versioned"
    case _: StreamFilterNodeSpec => "filter_stream"
    case _: TableFilterNodeSpec => "filter_table"
    case _: MapValuesNodeSpec => "map_values"
    case other => other.getClass.getSimpleName
  }
}
