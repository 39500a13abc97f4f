package io.github.sparksuppress.spark.chain

import java.nio.charset.StandardCharsets.UTF_8

import io.github.sparksuppress.core.{ByteReader, ByteWriter, IdleClock}
import io.github.sparksuppress.core.chain.ChainNode
import io.github.sparksuppress.spark.common.StateHeader

/**
 * The stored state of one group of a chain (a shard, or a key where the chain's state is per key): every node's state
 * and clock, in chain order, then every node's idle clock.
 *
 * {{{
 *   format 5 (1 byte) | node count (varint)
 *     | per node: its operator kind (bytes), the name the user gave it (bytes, empty if none), the fingerprint of
 *       what its state depends on (zig-zag), its state (NodeSpec)
 *     | per node: 1 and its IdleClock's fields, or 0 | run epoch (zig-zag)
 *   format 4 (read only): as format 5, but a join's node stored neither the largest stream timestamp it saw nor its
 *   rows' schema descriptors
 *   format 3 (read only): as format 4 without the fingerprints
 *   formats 1 and 2 (read only): format | node count | per node: kind, state | format 2: per node: 1 and clock, or 0
 * }}}
 *
 * The kinds let a query restarted with a different chain fail with a clear message instead of misreading state; the
 * names guard against state found at this operator's position that belongs to another named operator (Spark locates
 * state by position); the fingerprints against state written for other windows or aggregates, which would be misread
 * silently (`NodeSpec.fingerprint`). The run epoch tells the metrics whether what the state holds was already counted
 * in this run of the query. Switching an idle timeout on or off across a restart keeps every node's state (a new
 * clock starts, an old one is skipped), as for the stand-alone operators.
 */
private[chain] object ChainState {
  val Format: Int = 1
  val FormatWithIdleClocks: Int = 2

  /** Run epoch, names, and the schema descriptor of buffered rows (in a node's state). */
  val FormatWithDescriptors: Int = 3

  /** Format 3 and each node's fingerprint. */
  val FormatWithFingerprints: Int = 4

  /**
   * The format written: format 4, a join's node with the largest stream timestamp it saw, its rows' schema
   * descriptors and whether it has a buffer.
   */
  val FormatWithJoinDescriptors: Int = 5

  /** The epoch of state written by no run (a join's initial versions; state of formats 1 and 2). */
  val NoEpoch: Long = Long.MinValue

  def write(
      p: ChainParams,
      nodes: IndexedSeq[ChainNode[ChainKey]],
      clocks: IndexedSeq[Option[IdleClock]],
      epoch: Long
  ): Array[Byte] = {
    val out = new ByteWriter(256)
    out.writeByte(FormatWithJoinDescriptors)
    out.writeVarLong(nodes.length.toLong)
    var i = 0
    while (i < nodes.length) {
      out.writeBytes(kind(p.nodes(i)).getBytes(UTF_8))
      out.writeBytes(p.explicitName(i).getOrElse("").getBytes(UTF_8))
      out.writeZigZag(p.nodes(i).fingerprint)
      p.nodes(i).write(nodes(i), out, p.keys)
      i += 1
    }
    clocks.foreach {
      case Some(c) => out.writeByte(1); IdleClock.write(c, out)
      case None => out.writeByte(0)
    }
    out.writeZigZag(epoch)
    out.toByteArray
  }

  /** What [[read]] found besides the nodes' state: the run epoch and each node's idle clock. */
  final case class Restored(epoch: Long, clocks: IndexedSeq[Option[IdleClock]])

  /** Restores `nodes` from `bytes`; each node's idle clock follows `p.idleTimeouts` (restored, new or none). */
  def read(bytes: Array[Byte], p: ChainParams, nodes: IndexedSeq[ChainNode[ChainKey]]): Restored = {
    val in = new ByteReader(bytes)
    StateHeader.decoding(in, p.operator, "chain state") {
      val format =
        StateHeader.requireFormat(
          in.readByte(),
          Seq(Format, FormatWithIdleClocks, FormatWithDescriptors, FormatWithFingerprints, FormatWithJoinDescriptors),
          p.operator,
          "chain state"
        )
      readNodes(in, p, nodes, format)
      val clocks = nodes.indices.map { i =>
        IdleClock.readStored(format != Format && in.readByte() == 1, p.idleTimeout(i), in)
      }
      Restored(if (format >= FormatWithDescriptors) in.readZigZag() else NoEpoch, clocks)
    }
  }

  /** Each node's idle clock in a group without stored state. */
  def newClocks(p: ChainParams): IndexedSeq[Option[IdleClock]] =
    p.nodes.indices.map(p.idleTimeout(_).map(new IdleClock(_)))

  private def readNodes(in: ByteReader, p: ChainParams, nodes: IndexedSeq[ChainNode[ChainKey]], format: Int): Unit = {
    val stored = in.readCount("chain nodes")
    var i = 0
    while (i < stored) {
      val k = new String(in.readBytes(), UTF_8)
      if (i >= nodes.length || k != kind(p.nodes(i))) {
        throw new IllegalStateException(
          s"${p.operator}: the checkpoint was written by a different chain (its step ${i + 1} is $k, this query's is " +
            s"${if (i < nodes.length) kind(p.nodes(i)) else "missing"}). A chain's steps cannot change across " +
            s"restarts; " +
            "start the changed query with a new checkpoint location."
        )
      }
      if (format >= FormatWithDescriptors)
        StateHeader.requireOwnName(new String(in.readBytes(), UTF_8), p.explicitName(i), p.operator)
      if (format >= FormatWithFingerprints) {
        val fingerprint = in.readZigZag()
        // A node that keeps no fingerprint (0) can only find another one in damaged state.
        if (fingerprint != p.nodes(i).fingerprint && p.nodes(i).fingerprint == 0L)
          throw new IllegalStateException(
            s"malformed state: a fingerprint $fingerprint for step ${i + 1}, which has none"
          )
        if (fingerprint != p.nodes(i).fingerprint)
          throw new IllegalStateException(s"${p.nodes(i).operator}: ${p.nodes(i).changedDefinition}")
      }
      p.nodes(i).read(in, nodes(i), p.keys, format)
      i += 1
    }
    if (stored != nodes.length) {
      throw new IllegalStateException(
        s"${p.operator}: the checkpoint was written by a chain of $stored steps, this query has " +
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
