package io.github.sparksuppress.spark.chain

import io.github.sparksuppress.core.{ByteReader, ByteWriter}
import io.github.sparksuppress.core.chain.ChainNode
import io.github.sparksuppress.spark.common.OperatorMetricsAccumulator

/**
 * One node of a fused chain as the executors need it, built and checked on the driver: how to create the core node,
 * and how to store and restore its state (clock included) inside the shard's state.
 */
trait NodeSpec extends Serializable {

  /** The operator's name, for errors. */
  def operator: String

  def newNode(): ChainNode[ChainKey]

  /**
   * The core node for one call, given its operator's metrics (null without): a node that samples its buffers as Kafka
   * does (at every put) samples into them.
   */
  def newNode(metrics: OperatorMetricsAccumulator): ChainNode[ChainKey] = newNode()

  def write(node: ChainNode[ChainKey], out: ByteWriter, keys: ChainKeyCodec): Unit

  /** Restores `node` from state written under `format` (a [[ChainState]] format). */
  def read(in: ByteReader, node: ChainNode[ChainKey], keys: ChainKeyCodec, format: Int): Unit

  /**
   * The node's gauges as they stand (e.g. how many records its buffer holds), by metric name: reported per shard, or,
   * where the chain's state is per key, as how much the call changed them.
   */
  def gauges(node: ChainNode[ChainKey]): Seq[(String, Long)] = Nil

  /** Called once when this run of the query first sees the group's state (Kafka samples a buffer when it opens). */
  def opened(node: ChainNode[ChainKey]): Unit = ()

  /**
   * What the node's stored state depends on beyond its kind and name (e.g. window sizes, aggregate layouts, key
   * types), as a hash, or 0 for none: a restart whose node differs would misread the state, and is refused with
   * [[changedDefinition]].
   */
  def fingerprint: Long = 0L

  /** Why a changed [[fingerprint]] is refused, and the fix. */
  def changedDefinition: String = ""

  /** True when the node runs on the wall clock (a wall-clock suppress, beyond Kafka). */
  def onWallClock: Boolean = false

  /** True when the node holds nothing but its clock. */
  def isEmpty(node: ChainNode[ChainKey]): Boolean

  /**
   * Reports what the node did in one call to its operator's metrics (registered by `ChainPlan` under Kafka's names;
   * steps Kafka reports nothing for, filters and maps, report nothing); its [[gauges]] are reported by the caller.
   */
  def report(node: ChainNode[ChainKey], call: NodeCall): Unit = ()
}

/**
 * One call of a chain on one shard, as a node reports it.
 *
 * @param forwarded
 *   how many records the node forwarded
 * @param metrics
 *   its operator's metrics
 * @param shard
 *   the shard's number (gauges are per shard)
 * @param latencyMs
 *   wall-clock time since the micro-batch started (for final results' emit latency)
 */
final case class NodeCall(forwarded: Long, metrics: OperatorMetricsAccumulator, shard: Int, latencyMs: Long)
