package io.github.sparksuppress.spark.chain

import java.nio.charset.StandardCharsets.UTF_8

import io.github.sparksuppress.compat.tabulate
import io.github.sparksuppress.core.{ByteReader, ByteWriter, IdleClock}
import io.github.sparksuppress.core.chain.ChainNode
import io.github.sparksuppress.spark.common.StateHeader

/**
 * The stored state of one group of a chain (a shard, or a key where the chain's state is per key): every node's state
 * and clock, in chain order, then every node's idle clock.
 *
 * {{{
 *   format 7 (1 byte) | node count (varint)
 *     | per node: its operator kind (1 byte, [[KindCodes]]), the name the user gave it (bytes, empty if none), the
 *       fingerprint of what its state depends on (zig-zag), its state (NodeSpec)
 *     | per node: 1 and its IdleClock's fields, or 0 | run epoch (zig-zag)
 *     where the chain's state is per key, its keys are not stored at all (Spark's group is the key,
 *     [[ChainKeyCodec.ofKey]])
 *   format 6 (read only): as format 7, but per-key state stores its keys' values (not their bytes,
 *     [[ChainKeyCodec.ofGroup]])
 *   format 5 (read only): as format 6 with each kind's name (bytes) and every key's bytes
 *     | per node: its operator kind (bytes), the name the user gave it (bytes, empty if none), the fingerprint of
 *       what its state depends on (zig-zag), its state (NodeSpec)
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
   * Format 4, a join's node with the largest stream timestamp it saw, its rows' schema descriptors and whether it has
   * a buffer.
   */
  val FormatWithJoinDescriptors: Int = 5

  /** Format 5, each kind as one byte, and per-key state without its keys' bytes. */
  val FormatCompact: Int = 6

  /** The format written: format 6, and per-key state without its keys' values either. */
  val FormatBareKeys: Int = 7

  /** The epoch of state written by no run (a join's initial versions; state of formats 1 and 2). */
  val NoEpoch: Long = Long.MinValue

  /** Writes a group's state; `groupKey` is the key where the chain's state is per key (null for a shard). */
  def write(
      p: ChainParams,
      nodes: IndexedSeq[ChainNode[ChainKey]],
      clocks: IndexedSeq[Option[IdleClock]],
      epoch: Long,
      groupKey: ChainKey
  ): Array[Byte] = {
    val out = new ByteWriter(256)
    out.writeByte(FormatBareKeys)
    out.writeVarLong(nodes.length.toLong)
    val keys = keyCodec(p, group = null, groupKey, FormatBareKeys)
    var i = 0
    while (i < nodes.length) {
      out.writeByte(kindCode(p.nodes(i)))
      out.writeBytes(p.explicitName(i).getOrElse("").getBytes(UTF_8))
      out.writeZigZag(p.nodes(i).fingerprint)
      p.nodes(i).write(nodes(i), out, keys)
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

  /**
   * Restores `nodes` from the state of `group` (as [[write]] has it; `groupKey` is the key, its bytes `group`, where
   * the chain's state is per key); each node's idle clock follows `p.idleTimeouts` (restored, new or none).
   */
  def read(
      bytes: Array[Byte],
      p: ChainParams,
      nodes: IndexedSeq[ChainNode[ChainKey]],
      group: Array[Byte],
      groupKey: ChainKey
  ): Restored = {
    val in = new ByteReader(bytes)
    StateHeader.decoding(in, p.operator, "chain state") {
      val format = StateHeader.requireFormat(in.readByte(), Formats, p.operator, "chain state")
      readNodes(in, p, nodes, format, keyCodec(p, group, groupKey, format))
      val clocks = tabulate(nodes.length) { i =>
        IdleClock.readStored(format != Format && in.readByte() == 1, p.idleTimeout(i), in)
      }
      Restored(if (format >= FormatWithDescriptors) in.readZigZag() else NoEpoch, clocks)
    }
  }

  /** Each node's idle clock in a group without stored state. */
  def newClocks(p: ChainParams): IndexedSeq[Option[IdleClock]] =
    tabulate(p.nodes.length)(p.idleTimeout(_).map(new IdleClock(_)))

  private val Formats =
    Seq(
      Format,
      FormatWithIdleClocks,
      FormatWithDescriptors,
      FormatWithFingerprints,
      FormatWithJoinDescriptors,
      FormatCompact,
      FormatBareKeys
    )

  /** Every node kind, by its code in format 6 (append only: a code, once written, keeps its kind). */
  private val KindCodes = IndexedSeq(
    "suppress",
    "aggregate_windowed",
    "aggregate",
    "join_versioned",
    "filter_stream",
    "filter_table",
    "map_values"
  )

  private def keyCodec(p: ChainParams, group: Array[Byte], groupKey: ChainKey, format: Int): ChainKeyCodec =
    if (!p.perKey || format < FormatCompact) p.keys
    else if (format == FormatCompact) p.keys.ofGroup(group)
    else p.keys.ofKey(groupKey)

  private def readKind(in: ByteReader, format: Int): String =
    if (format < FormatCompact) new String(in.readBytes(), UTF_8)
    else {
      val code = in.readByte()
      if (code < 0 || code >= KindCodes.length) throw new IllegalStateException(s"malformed state: node kind $code")
      KindCodes(code)
    }

  private def readNodes(
      in: ByteReader,
      p: ChainParams,
      nodes: IndexedSeq[ChainNode[ChainKey]],
      format: Int,
      keys: ChainKeyCodec
  ): Unit = {
    val stored = in.readCount("chain nodes")
    var i = 0
    while (i < stored) {
      val k = readKind(in, format)
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
      p.nodes(i).read(in, nodes(i), keys, format)
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

  private def kind(n: NodeSpec): String = KindCodes(kindCode(n))

  /** The node's kind as format 6 stores it: its place in [[KindCodes]]. */
  private def kindCode(n: NodeSpec): Int = n match {
    case _: SuppressNodeSpec => 0
    case _: WindowedAggregateNodeSpec => 1
    case _: KeyAggregateNodeSpec => 2
    case _: JoinNodeSpec => 3
    case _: StreamFilterNodeSpec => 4
    case _: TableFilterNodeSpec => 5
    case _: MapValuesNodeSpec => 6
    case other => throw new IllegalStateException(s"no stored kind for ${other.getClass.getName}")
  }
}
