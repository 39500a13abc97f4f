package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow

import io.github.sparksuppress.core._
import io.github.sparksuppress.core.chain.{ChainNode, WindowBounds, WindowedAggregateNode}
import io.github.sparksuppress.spark.window.{AggregateBuffer, InputRecord}

/**
 * A windowed aggregation in a chain. It forwards rows shaped as the stand-alone operator's output: the key columns,
 * `window` (start, end; end exclusive as Spark's `window()` has it), the aggregates, the timestamp and, for sessions
 * emitting updates, `retraction` (a retraction travels as a tombstone carrying its row). With `emitLate` (beyond
 * Kafka) a record dropped for a closed window also leaves the chain, as a late row of the same shape.
 */
final case class WindowedAggregateNodeSpec(
    operator: String,
    definition: WindowDefinition,
    mode: EmitMode,
    inputs: AggregateInputs,
    retractions: Boolean,
    emitLate: Boolean = false
) extends NodeSpec {

  def newNode(): ChainNode[ChainKey] =
    new WindowedAggregateNode[ChainKey, InputRecord, AggregateBuffer](
      definition,
      mode,
      inputs.buffers,
      inputs.valueOf,
      render,
      emitLate
    )

  private def render(key: ChainKey, w: WindowBounds, ts: Long, buffer: AggregateBuffer, retraction: Boolean): AnyRef = {
    val keys = key.values.length
    val values = new Array[Any](keys + 2 + buffer.parts.length + (if (retractions) 1 else 0))
    var i = 0
    while (i < keys) { values(i) = key.values.get(i); i += 1 }
    values(keys) = Row(new java.sql.Timestamp(w.start), new java.sql.Timestamp(outputEnd(w.end)))
    var a = 0
    while (a < buffer.parts.length) { values(keys + 1 + a) = buffer.parts(a).result(); a += 1 }
    values(keys + 1 + a) = new java.sql.Timestamp(ts)
    if (retractions) values(keys + 2 + a) = retraction
    new GenericRow(values)
  }

  /** As the stand-alone operator: sliding windows end 1 ms after Kafka's inclusive end, sessions `gap` after it. */
  private def outputEnd(end: Long): Long = definition match {
    case _: SlidingWindowDefinition => end + 1
    case s: SessionWindowDefinition => end + s.gapMs
    case _ => end
  }

  private def node(n: ChainNode[ChainKey]) =
    n.asInstanceOf[WindowedAggregateNode[ChainKey, InputRecord, AggregateBuffer]]

  def write(n: ChainNode[ChainKey], out: ByteWriter, keys: ChainKeyCodec): Unit = {
    val a = node(n)
    out.writeZigZag(a.streamTime)
    out.writeVarLong(a.aggregators.size().toLong)
    a.aggregators.forEach { (k, agg) =>
      keys.write(out, k)
      KeyWindowsCodec.write(agg.windows, definition, out, inputs.buffers.stateCodec)
    }
  }

  def read(in: ByteReader, n: ChainNode[ChainKey], keys: ChainKeyCodec, format: Int): Unit = {
    val a = node(n)
    a.restore(in.readZigZag())
    var i = in.readVarLong()
    while (i > 0) {
      val k = keys.read(in)
      a.restoreKey(k, KeyWindowsCodec.read(in, definition, inputs.buffers.stateCodec))
      i -= 1
    }
  }

  def isEmpty(n: ChainNode[ChainKey]): Boolean = node(n).aggregators.isEmpty

  override def report(n: ChainNode[ChainKey], call: NodeCall): Unit = {
    val m = node(n).metrics
    call.metrics.count("dropped", m.dropped)
    call.metrics.count("lateness-records", m.latenessRecords)
    call.metrics.count("lateness-total", m.latenessTotal)
    if (m.latenessRecords > 0) call.metrics.max("lateness-max", m.latenessMax)
    if (m.emittedFinal > 0) {
      call.metrics.count("emitted-final", m.emittedFinal)
      call.metrics.count("emit-latency-total", call.latencyMs * m.emittedFinal)
      call.metrics.max("emit-latency-max", call.latencyMs)
    }
  }
}
