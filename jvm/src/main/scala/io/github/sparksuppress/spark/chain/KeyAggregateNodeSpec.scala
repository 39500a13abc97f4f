package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.catalyst.expressions.GenericRow

import io.github.sparksuppress.core._
import io.github.sparksuppress.core.chain.{ChainNode, KeyAggregateNode}
import io.github.sparksuppress.spark.window.{AggregateBuffer, InputRecord}

/**
 * A non-windowed aggregation (Kafka's KTable aggregation) in a chain. It forwards rows of the key columns, the
 * aggregates and the timestamp: one per input record with a key and a value.
 */
final case class KeyAggregateNodeSpec(operator: String, inputs: AggregateInputs, keyColumns: Int) extends NodeSpec {
  private val layout = new AggregateRow(keyColumns, windowed = false, inputs.aggregates.length, flagged = false)

  def newNode(): ChainNode[ChainKey] =
    new KeyAggregateNode[ChainKey, InputRecord, AggregateBuffer](inputs.buffers, inputs.valueOf, render)

  private def render(key: ChainKey, ts: Long, buffer: AggregateBuffer): AnyRef = {
    val values = new Array[Any](layout.width)
    var i = 0
    while (i < keyColumns) { values(i) = key.values.get(i); i += 1 }
    var a = 0
    while (a < buffer.parts.length) { values(layout.aggregate(a)) = buffer.parts(a).result(); a += 1 }
    values(layout.Timestamp) = new java.sql.Timestamp(ts)
    new GenericRow(values)
  }

  private def node(n: ChainNode[ChainKey]) = n.asInstanceOf[KeyAggregateNode[ChainKey, InputRecord, AggregateBuffer]]

  def write(n: ChainNode[ChainKey], out: ByteWriter, keys: ChainKeyCodec): Unit = {
    val a = node(n)
    out.writeZigZag(a.streamTime)
    out.writeVarLong(a.entries.size().toLong)
    a.entries.forEach { (k, e) =>
      keys.write(out, k)
      out.writeZigZag(e.timestamp)
      inputs.buffers.stateCodec.write(out, e.buffer)
    }
  }

  def read(in: ByteReader, n: ChainNode[ChainKey], keys: ChainKeyCodec, format: Int): Unit = {
    val a = node(n)
    a.restore(in.readZigZag())
    var i = in.readVarLong()
    while (i > 0) {
      val k = keys.read(in)
      val ts = in.readZigZag()
      a.restoreKey(k, inputs.buffers.stateCodec.read(in), ts)
      i -= 1
    }
  }

  def isEmpty(n: ChainNode[ChainKey]): Boolean = node(n).entries.isEmpty

  override def report(n: ChainNode[ChainKey], call: NodeCall): Unit = call.metrics.count("dropped", node(n).dropped)
}
