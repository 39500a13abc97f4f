package io.github.sparksuppress.spark.chain

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.Row
import org.apache.spark.sql.streaming.GroupState
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.core.IdleClock
import io.github.sparksuppress.core.chain.{Chain, ChainOutput, ChainRecord, JoinNode, WindowBounds => Bounds}
import io.github.sparksuppress.spark.common.{FlaggedRows, OperatorMetricsAccumulator}
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
 * @param emitsLate
 *   a node emits late records (beyond Kafka): every output row gets the `late` flag, true for those
 * @param idleTimeouts
 *   per node, its idle timeout (beyond Kafka: its stream time runs on with the wall clock once it stood still this
 *   long, [[IdleClock]]); empty for none
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
    metrics: IndexedSeq[OperatorMetricsAccumulator] = IndexedSeq.empty,
    emitsLate: Boolean = false,
    idleTimeouts: IndexedSeq[Option[Long]] = IndexedSeq.empty
) {
  def idleTimeout(i: Int): Option[Long] = if (idleTimeouts.isEmpty) None else idleTimeouts(i)

  /**
   * Some node moves with the wall clock (an idle clock, a wall-clock suppress): the chain needs a call per trigger.
   */
  val onWallClock: Boolean = idleTimeouts.exists(_.isDefined) || nodes.exists(_.onWallClock)
}

/**
 * The function `flatMapGroupsWithState` calls once per shard of a chain. The shard plays Kafka's task: its state
 * holds every node's state for the shard's keys and one clock per node. The first node's clock first moves to the
 * watermark (so quiet keys' windows close, and a timer brings a quiet shard here); then the batch's records go
 * through the chain one by one (a join's table updates first, as the stand-alone join orders them), each node
 * forwarding to the next at once. One event-time timer waits for the first node's next due time; downstream nodes
 * move only with what reaches them.
 *
 * Beyond Kafka, a node can move with the wall clock: a wall-clock suppress runs on the micro-batch's time, and a node
 * with an idle timeout runs on its [[IdleClock]] once its stream time stood still that long (the stand-alone
 * operators' rules, with the shard as the group). Such a chain has processing-time timeouts and is called in every
 * micro-batch while it holds anything; before the batch's records, each such node is moved in chain order, and what
 * it releases flows down at once.
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
    val clocks = state.getOption match {
      case Some(bytes) => ChainState.read(bytes, p, nodes)
      case None => ChainState.newClocks(p)
    }
    val forwarded = new Array[Long](nodes.length)
    val chain = new Chain[ChainKey](nodes, if (p.metrics.isEmpty) null else (i, _) => forwarded(i) += 1)
    val out = new ArrayBuffer[Row]()
    val sink = new ChainOutput[ChainKey] {
      // Under late="emit" every output row ends with the `late` flag.
      def forward(r: ChainRecord[ChainKey]): Unit = {
        val row = r.value.asInstanceOf[Row]
        out += (if (p.emitsLate) FlaggedRows.append(row, flag = false) else row)
      }
      override def late(r: ChainRecord[ChainKey]): Unit = out += FlaggedRows.append(r.value.asInstanceOf[Row], true)
    }

    val waiting = if (p.joinReleases) nodes.head.asInstanceOf[JoinNode[ChainKey]].buffered else 0
    val readsWatermark = p.followsWatermark || p.joinReleases
    val watermark = if (readsWatermark) state.getCurrentWatermarkMs() else Long.MinValue
    if (readsWatermark) chain.advance(watermark, sink)
    val batch = if (state.hasTimedOut) Array.empty[Row] else rows.filter(_.getInt(Side) != Heartbeat).toArray
    val now = state.getCurrentProcessingTimeMs()
    if (p.onWallClock) moveOnWallClock(chain, clocks, watermark, now, batch.nonEmpty, sink)
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

    var i = 0
    while (i < nodes.length) { clocks(i).foreach(_.observe(idleBase(chain, i, watermark), now)); i += 1 }

    // Kept even when every buffer is empty: the nodes' clocks are Kafka's stream times and must survive. A
    // heartbeat that released nothing changed nothing.
    if (
      batch.nonEmpty || !p.joinReleases || p.onWallClock ||
      nodes.head.asInstanceOf[JoinNode[ChainKey]].buffered != waiting
    ) {
      state.update(ChainState.write(p, nodes, clocks))
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
    if (p.onWallClock) {
      // Called in every micro-batch (1 ms: the next one) while the chain holds anything or an idle clock ran ahead of
      // the watermark: the watermark, the wall clock or an idle clock may make something due, or let it be forgotten.
      val holds =
        nodes.indices.exists(i => !p.nodes(i).isEmpty(nodes(i))) || clocks.exists(_.exists(_.aheadOf(watermark)))
      if (holds) state.setTimeoutDuration(1L)
    } else if (p.followsWatermark) {
      val due = chain.nextDueStreamTime
      // Spark fires a timer once timer < watermark; the first node needs a call once due <= its stream time.
      if (due != Long.MaxValue) state.setTimeoutTimestamp(math.max(1L, due - 1))
    }
    out.iterator
  }

  /**
   * Moves, in chain order, each wall-clock node to `now` and each node with an idle clock to that clock's stream
   * time, as the stand-alone operators do before their batch's records: a clock that decides something (the node
   * holds records, or the batch may bring some) is advanced, otherwise only observed.
   */
  private def moveOnWallClock(
      chain: Chain[ChainKey],
      clocks: IndexedSeq[Option[IdleClock]],
      watermark: Long,
      now: Long,
      batchNonEmpty: Boolean,
      sink: ChainOutput[ChainKey]
  ): Unit = {
    var i = 0
    while (i < chain.nodes.length) {
      val node = chain.nodes(i)
      if (!node.followsEventTime) chain.advanceNode(i, now, sink)
      clocks(i).foreach { c =>
        val base = idleBase(chain, i, watermark)
        val t = c.runAt(base, now, decides = batchNonEmpty || !p.nodes(i).isEmpty(node))
        if (t > base) chain.advanceNode(i, t, sink)
      }
      i += 1
    }
  }

  /** What node i's idle clock watches: its own time and, for the node the input's clock moves, the watermark. */
  private def idleBase(chain: Chain[ChainKey], i: Int, watermark: Long): Long =
    if (i <= chain.clockNode) math.max(chain.nodes(i).idleBase, watermark) else chain.nodes(i).idleBase

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
