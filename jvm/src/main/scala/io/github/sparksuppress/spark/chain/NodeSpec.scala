package io.github.sparksuppress.spark.chain

import io.github.sparksuppress.core.{ByteReader, ByteWriter}
import io.github.sparksuppress.core.chain.ChainNode

/**
 * One node of a fused chain as the executors need it, built and checked on the driver: how to create the core
 * node, and how to store and restore its state (clock included) inside the shard's state.
 */
trait NodeSpec extends Serializable {
  /** The operator's name, for errors. */
  def operator: String

  def newNode(): ChainNode[ChainKey]

  def write(node: ChainNode[ChainKey], out: ByteWriter, keys: ChainKeyCodec): Unit

  def read(in: ByteReader, node: ChainNode[ChainKey], keys: ChainKeyCodec): Unit

  /** True when the node holds nothing but its clock. */
  def isEmpty(node: ChainNode[ChainKey]): Boolean
}
