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

  def write(node: ChainNode[ChainKey], out: ByteWriter, keys: ChainKeyCodec): Unit

  def read(in: ByteReader, node: ChainNode[ChainKey], keys: ChainKeyCodec): Unit

  /** True when the node runs on the wall clock (a wall-clock suppress, beyond Kafka). */
  def onWallClock: Boolean = false

  /** True when the node holds nothing but its clock. */
  def isEmpty(node: ChainNode[ChainKey]): Boolean

  /**
   * Reports what the node did in one call and what it holds afterwards to its operator's metrics (registered by
   * `ChainPlan` under Kafka's names; steps Kafka reports nothing for, filters and maps, report nothing).
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
