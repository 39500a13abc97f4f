package io.github.sparksuppress.spark.chain

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.Row
import org.apache.spark.sql.streaming.GroupState
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core.chain.{Chain, ChainOutput, ChainRecord, WindowBounds => Bounds}
import io.github.sparksuppress.spark.{SparkTime, WindowBounds}

/**
 * Everything the executors need to run one fused chain; built and checked on the driver.
 *
 * @param operator    the chain's name in errors (its operators' names joined)
 * @param inputSchema the first step's input row (watermark markers removed)
 * @param keyColumns  the chain key's columns in `inputSchema`
 * @param tombstone   a boolean column of the input marking deletions (a table's changelog)
 * @param window      where a windowed input keeps its window (a suppress reading windowed rows)
 */
final case class ChainParams(
    operator: String,
    inputSchema: StructType,
    keyColumns: Array[Int],
    timestampColumn: Int,
    tombstone: Option[Int],
    window: Option[WindowBounds],
    nodes: IndexedSeq[NodeSpec],
    keys: ChainKeyCodec)

/**
 * The function `flatMapGroupsWithState` calls once per shard of a chain. The shard plays Kafka's task: its state
 * holds every node's state for the shard's keys and one clock per node. The first node's clock first moves to
 * the watermark (so quiet keys' windows close, and a timer brings a quiet shard here); then the batch's records
 * go through the chain one by one in arrival order, each node forwarding to the next at once. One event-time
 * timer waits for the first node's next due time; downstream nodes move only with what reaches them.
 */
final class ChainFunction(p: ChainParams) extends ((Array[Byte], Iterator[Row], GroupState[Array[Byte]]) => Iterator[Row])
    with Serializable {
  import ChainFunction._

  override def apply(shard: Array[Byte], rows: Iterator[Row], state: GroupState[Array[Byte]]): Iterator[Row] = {
    val watermark = state.getCurrentWatermarkMs()
    val nodes = p.nodes.map(_.newNode())
    state.getOption.foreach(ChainState.read(_, p, nodes))
    val chain = new Chain[ChainKey](nodes)
    val out = new ArrayBuffer[Row]()
    val sink = new ChainOutput[ChainKey] {
      def forward(r: ChainRecord[ChainKey]): Unit = out += r.value.asInstanceOf[Row]
    }

    chain.advance(watermark, sink)
    if (!state.hasTimedOut) {
      val batch = rows.toArray
      if (batch.length > 1) java.util.Arrays.sort(batch, BySeq)
      var i = 0
      while (i < batch.length) {
        chain.process(record(batch(i)), sink)
        i += 1
      }
    }

    // Kept even when every buffer is empty: the nodes' clocks are Kafka's stream times and must survive.
    state.update(ChainState.write(p, nodes))
    val due = chain.nextDueStreamTime
    // Spark fires a timer once timer < watermark; the first node needs a call once due <= its stream time.
    if (due != Long.MaxValue) state.setTimeoutTimestamp(math.max(1L, due - 1))
    out.iterator
  }

  private def record(row: Row): ChainRecord[ChainKey] = {
    val user = row.getStruct(Row0)
    val keyValues = Row.fromSeq(p.keyColumns.toSeq.map(user.get))
    val key = new ChainKey(row.getAs[Array[Byte]](Key), keyValues)
    if (user.isNullAt(p.timestampColumn)) {
      throw new IllegalStateException(
        s"${p.operator}: the event-time column '${p.inputSchema.fields(p.timestampColumn).name}' is null in an input " +
          "row; every row needs an event time. Filter such rows out (or fill them) before the operator.")
    }
    val ts = SparkTime.millis(user.get(p.timestampColumn))
    val deleted = p.tombstone.exists(c => !user.isNullAt(c) && user.getBoolean(c))
    val window = p.window.map(w => Bounds(w.start(user, p.operator), w.end(user, p.operator))).orNull
    ChainRecord(key, window, user, ts, deleted)
  }

  @transient private lazy val BySeq: java.util.Comparator[Row] =
    (a: Row, b: Row) => java.lang.Long.compare(a.getLong(Seq), b.getLong(Seq))
}

object ChainFunction {
  /** Positions of the grouped input's columns: the user's row, the encoded key, the arrival sequence. */
  val Row0 = 0
  val Key = 1
  val Seq = 2
}
