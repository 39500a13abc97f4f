package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow

import io.github.sparksuppress.core._
import io.github.sparksuppress.core.chain.{ChainNode, WindowBounds, WindowedAggregateNode}
import io.github.sparksuppress.spark.common.SparkTime
import io.github.sparksuppress.spark.window.{AggregateBuffer, InputRecord, MapSideParams}

/**
 * A windowed aggregation in a chain (on its own, a chain of one). It forwards rows of the key columns, `window`
 * (start, end; end exclusive as Spark's `window()` has it), the aggregates, the timestamp and, for sessions emitting
 * updates, `retraction` (a retraction travels as a tombstone carrying its row). With `emitLate` (beyond Kafka) a
 * record dropped for a closed window also leaves the chain, as a late row of the same shape.
 *
 * With `mapSide`, a physical choice for a lone aggregation, the aggregates' inputs were evaluated before the shuffle
 * and, for time windows with final results, records combined per key and window there ([[MapSideFeed]]).
 */
final case class WindowedAggregateNodeSpec(
    operator: String,
    definition: WindowDefinition,
    mode: EmitMode,
    inputs: AggregateInputs,
    keyColumns: Int,
    retractions: Boolean,
    emitLate: Boolean = false,
    timestampNtz: Boolean = false,
    override val fingerprint: Long = 0L,
    mapSide: Option[MapSideParams] = None
) extends NodeSpec {

  override def changedDefinition: String =
    "the checkpoint's state was written for other windows, aggregations or key types than this query now has, and " +
      "would be misread. Restore the original windows and aggregations, or start from a new checkpoint (open " +
      "windows would be lost)."

  def newNode(): ChainNode[ChainKey] =
    new WindowedAggregateNode[ChainKey, InputRecord, AggregateBuffer](
      definition,
      mode,
      inputs.buffers,
      inputs.valueOf,
      render,
      emitLate,
      measuresLateness = mapSide.isEmpty
    )

  private def render(key: ChainKey, w: WindowBounds, ts: Long, buffer: AggregateBuffer, retraction: Boolean): AnyRef = {
    val values = new Array[Any](layout.width)
    var i = 0
    while (i < keyColumns) { values(i) = key.values.get(i); i += 1 }
    values(layout.Window) = Row(time(w.start), time(outputEnd(w.end)))
    var a = 0
    while (a < buffer.parts.length) { values(layout.aggregate(a)) = buffer.parts(a).result(); a += 1 }
    values(layout.Timestamp) = time(ts)
    if (retractions) values(layout.Flag) = retraction
    new GenericRow(values)
  }

  private val layout = new AggregateRow(keyColumns, windowed = true, inputs.aggregates.length, retractions)

  private def time(ms: Long): Any = SparkTime.external(ms, timestampNtz)

  /**
   * The output `window.end`: exclusive, as Spark's `window()` and `session_window()` give it. Time windows keep
   * Kafka's exclusive end; a sliding window's inclusive end becomes end + 1 ms; a session ends `gap` after its last
   * record, as `session_window` has it (Kafka's inclusive session end is the result's timestamp).
   */
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
