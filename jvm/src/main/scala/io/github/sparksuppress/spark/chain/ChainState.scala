package io.github.sparksuppress.spark.chain

import io.github.sparksuppress.core.{ByteReader, ByteWriter}
import io.github.sparksuppress.core.chain.ChainNode
import io.github.sparksuppress.spark.common.StateHeader

/**
 * The stored state of one shard of a chain: every node's state and clock, in chain order.
 *
 * {{{
 *   format (1 byte) | node count (varint) | per node: its operator kind (bytes) then its state (its NodeSpec)
 * }}}
 *
 * The kinds let a query restarted with a different chain fail with a clear message instead of misreading state.
 */
private[chain] object ChainState {
  val Format: Int = 1

  def write(p: ChainParams, nodes: IndexedSeq[ChainNode[ChainKey]]): Array[Byte] = {
    val out = new ByteWriter(256)
    out.writeByte(Format)
    out.writeVarLong(nodes.length.toLong)
    var i = 0
    while (i < nodes.length) {
      out.writeBytes(kind(p.nodes(i)).getBytes("UTF-8"))
      p.nodes(i).write(nodes(i), out, p.keys)
      i += 1
    }
    out.toByteArray
  }

  def read(bytes: Array[Byte], p: ChainParams, nodes: IndexedSeq[ChainNode[ChainKey]]): Unit = {
    val in = new ByteReader(bytes)
    StateHeader.decoding(in, p.operator, "chain state")(readNodes(in, p, nodes))
  }

  private def readNodes(in: ByteReader, p: ChainParams, nodes: IndexedSeq[ChainNode[ChainKey]]): Unit = {
    val format = in.readByte()
    if (format != Format) {
      throw new IllegalStateException(
        s"${p.operator}: the checkpoint holds chain state of format $format; this spark-suppress reads format " +
          s"$Format. " +
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
