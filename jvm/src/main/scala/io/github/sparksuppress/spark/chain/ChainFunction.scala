package io.github.sparksuppress.spark.chain

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.Row
import org.apache.spark.sql.streaming.GroupState
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core.chain.{Chain, ChainOutput, ChainRecord, JoinNode, WindowBounds => Bounds}
import io.github.sparksuppress.spark.common.OperatorMetricsAccumulator
import io.github.sparksuppress.spark.suppress.WindowBounds

/**
 * Everything the executors need to run one fused chain; built and checked on the driver.
 *
 * @param operator
 *   the chain's name in errors (its operators' names joined)
 * @param inputSchema
 *   the first step's (stream) input row, watermark markers removed
 * @param timestampName
 *   the input's event-time column, for errors
 * @param tombstone
 *   a boolean column of the input marking deletions (a table's changelog)
 * @param window
 *   where a windowed input keeps its window (a suppress reading windowed rows)
 * @param followsWatermark
 *   the first node's clock follows the query's watermark (false for a join, whose stream time moves only with stream
 *   records, as in Kafka)
 * @param joinReleases
 *   the chain starts with a join that also releases its waiting records on the watermark (every shard is called in
 *   each micro-batch that reads data: [[ShardHeartbeats]])
 * @param metrics
 *   per node, its operator's metrics (null for a step without metrics); empty for none
 */
final case class ChainParams(
    operator: String,
    inputSchema: StructType,
    timestampName: String,
    tombstone: Option[Int],
    window: Option[WindowBounds],
    nodes: IndexedSeq[NodeSpec],
    keys: ChainKeyCodec,
    followsWatermark: Boolean,
    joinReleases: Boolean = false,
    metrics: IndexedSeq[OperatorMetricsAccumulator] = IndexedSeq.empty
)

/**
 * The function `flatMapGroupsWithState` calls once per shard of a chain. The shard plays Kafka's task: its state
 * holds every node's state for the shard's keys and one clock per node. The first node's clock first moves to the
 * watermark (so quiet keys' windows close, and a timer brings a quiet shard here); then the batch's records go
 * through the chain one by one (a join's table updates first, as the stand-alone join orders them), each node
 * forwarding to the next at once. One event-time timer waits for the first node's next due time; downstream nodes
 * move only with what reaches them.
 */
final class ChainFunction(p: ChainParams)
    extends ((Array[Byte], Iterator[Row], GroupState[Array[Byte]]) => Iterator[Row])
    with Serializable {
  import ChainFunction._

  private val join = p.nodes.head match {
    case j: JoinNodeSpec => j
    case _ => null
  }

  override def apply(shard: Array[Byte], rows: Iterator[Row], state: GroupState[Array[Byte]]): Iterator[Row] = {
    val nodes = p.nodes.map(_.newNode())
    state.getOption.foreach(ChainState.read(_, p, nodes))
    val forwarded = new Array[Long](nodes.length)
    val chain = new Chain[ChainKey](nodes, if (p.metrics.isEmpty) null else (i, _) => forwarded(i) += 1)
    val out = new ArrayBuffer[Row]()
    val sink = new ChainOutput[ChainKey] {
      def forward(r: ChainRecord[ChainKey]): Unit = out += r.value.asInstanceOf[Row]
    }

    val waiting = if (p.joinReleases) nodes.head.asInstanceOf[JoinNode[ChainKey]].buffered else 0
    if (p.followsWatermark || p.joinReleases) chain.advance(state.getCurrentWatermarkMs(), sink)
    val batch = if (state.hasTimedOut) Array.empty[Row] else rows.filter(_.getInt(Side) != Heartbeat).toArray
    if (batch.nonEmpty) {
      if (batch.length > 1) java.util.Arrays.sort(batch, BySideThenArrival)
      var i = 0
      while (i < batch.length) {
        val row = batch(i)
        if (row.getInt(Side) == TableSide) chain.table(tableRecord(row), sink)
        else chain.process(streamRecord(row), sink)
        i += 1
      }
    }

    // Kept even when every buffer is empty: the nodes' clocks are Kafka's stream times and must survive. A
    // heartbeat that released nothing changed nothing.
    if (batch.nonEmpty || !p.joinReleases || nodes.head.asInstanceOf[JoinNode[ChainKey]].buffered != waiting) {
      state.update(ChainState.write(p, nodes))
    }
    if (p.metrics.nonEmpty) {
      val shardNumber = java.util.Arrays.hashCode(shard)
      val latency = math.max(0L, System.currentTimeMillis() - state.getCurrentProcessingTimeMs())
      var i = 0
      while (i < nodes.length) {
        if (p.metrics(i) != null)
          p.nodes(i).report(nodes(i), NodeCall(forwarded(i), p.metrics(i), shardNumber, latency))
        i += 1
      }
    }
    if (p.followsWatermark) {
      val due = chain.nextDueStreamTime
      // Spark fires a timer once timer < watermark; the first node needs a call once due <= its stream time.
      if (due != Long.MaxValue) state.setTimeoutTimestamp(math.max(1L, due - 1))
    }
    out.iterator
  }

  private def key(row: Row): ChainKey = ChainKey.orNull(row.getAs[Array[Byte]](Key), row.getStruct(KeyValues))

  private def time(row: Row, side: String): Long = {
    if (row.isNullAt(Time)) {
      throw new IllegalStateException(
        s"${p.operator}: a $side row has a null event time; every row needs one. Filter such rows out (or fill " +
          "them) before the operator."
      )
    }
    row.getLong(Time)
  }

  private def streamRecord(row: Row): ChainRecord[ChainKey] = {
    val user = row.getStruct(UserRow)
    val deleted =
      if (join != null) join.valueIsNull(user)
      else p.tombstone.exists(c => !user.isNullAt(c) && user.getBoolean(c))
    val window = p.window.map(w => Bounds(w.start(user, p.operator), w.end(user, p.operator))).orNull
    ChainRecord(key(row), window, user, time(row, "stream"), deleted)
  }

  private def tableRecord(row: Row): ChainRecord[ChainKey] = {
    val deleted = !row.isNullAt(Tombstone) && row.getBoolean(Tombstone)
    ChainRecord(key(row), null, if (deleted) null else row.getStruct(TableRow), time(row, "table"), deleted)
  }

  @transient private lazy val BySideThenArrival: java.util.Comparator[Row] = (a: Row, b: Row) => {
    val c = Integer.compare(b.getInt(Side), a.getInt(Side)) // table updates first
    if (c != 0) c else java.lang.Long.compare(a.getLong(Seq), b.getLong(Seq))
  }
}

object ChainFunction {

  /** Positions of the grouped input's columns. */
  val UserRow = 0
  val Key = 1
  val Seq = 2
  val KeyValues = 3
  val Side = 4
  val TableRow = 5
  val Tombstone = 6
  val Time = 7

  val StreamSide = 0
  val TableSide = 1

  /** A row that only makes Spark call its shard. */
  val Heartbeat = 2
}
