package io.github.sparksuppress.spark.chain

import scala.collection.mutable.ArrayBuffer
import scala.reflect.ClassTag

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.expressions.GenericRow
import org.apache.spark.sql.streaming.GroupState
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.compat.tabulate
import io.github.sparksuppress.core.IdleClock
import io.github.sparksuppress.core.chain.{Chain, ChainNode, ChainOutput, ChainRecord, JoinNode, WindowBounds => Bounds}
import io.github.sparksuppress.spark.common.{FlaggedRows, InputRule, KeyEncoding, OperatorMetricsAccumulator}
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
 * @param explicitNames
 *   per node, the name the user gave its operator (it guards the operator's state in the checkpoint); empty for none
 * @param epoch
 *   this build of the query's plan (a run), so that metrics know whether stored state was already counted in it
 * @param perKey
 *   the chain's state is per key, not per shard (a physical choice: only for a chain whose nodes need no more than
 *   one key at a time, e.g. a lone unbounded suppress; stream time is then the watermark advanced by the key's own
 *   records); Spark groups by the key's columns and [[PerKeyChainFunction]] calls this function
 * @param inputRule
 *   how the first operator reads rows without a key or a usable event time (its documented rule)
 * @param streamKeys
 *   the ordinals of the key columns in the stream's rows: a stream record's key values are read there, so that the
 *   shuffle carries them once (only a table update carries them apart, [[ChainRows.KeyValues]])
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
    idleTimeouts: IndexedSeq[Option[Long]] = IndexedSeq.empty,
    explicitNames: IndexedSeq[Option[String]] = IndexedSeq.empty,
    epoch: Long = ChainParams.newEpoch(),
    perKey: Boolean = false,
    inputRule: InputRule = InputRule.Keyed,
    streamKeys: IndexedSeq[Int] = IndexedSeq.empty
) {
  def idleTimeout(i: Int): Option[Long] = if (idleTimeouts.isEmpty) None else idleTimeouts(i)

  def explicitName(i: Int): Option[String] = if (explicitNames.isEmpty) None else explicitNames(i)

  /**
   * Some node moves with the wall clock (an idle clock, a wall-clock suppress): the chain needs a call per trigger.
   */
  val onWallClock: Boolean = idleTimeouts.exists(_.isDefined) || nodes.exists(_.onWallClock)

  /** The chain is one wall-clock node and nothing else moves it: it needs a call only when its next entry is due. */
  val wallClockOnly: Boolean = nodes.length == 1 && nodes.head.onWallClock && idleTimeouts.forall(_.isEmpty)
}

object ChainParams {

  /**
   * A run's epoch: random, never [[ChainState.NoEpoch]]; 31 bits, so that every key's state spends at most 5 bytes on
   * it (two runs share an epoch once in two billion restarts, and then only the metrics miscount).
   */
  def newEpoch(): Long = (new java.util.Random().nextInt() & Int.MaxValue).toLong
}

/**
 * The function `flatMapGroupsWithState` calls once per shard of a chain (or per key, `ChainParams.perKey`). The shard
 * plays Kafka's task: its state holds every node's state for the shard's keys and one clock per node. The first
 * node's clock first moves to the watermark (so quiet keys' windows close, and a timer brings a quiet shard here);
 * then the batch's records go through the chain one by one (a join's table updates first, as the stand-alone join
 * orders them), each node forwarding to the next at once. One event-time timer waits for the first node's next due
 * time; downstream nodes move only with what reaches them.
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
  import ChainRows._

  private val join = p.nodes.head match {
    case j: JoinNodeSpec => j
    case _ => null
  }

  private val mapSide = p.nodes.head match {
    case w: WindowedAggregateNodeSpec if w.mapSide.isDefined => new MapSideFeed(w)
    case _ => null
  }

  private def firstMetrics: OperatorMetricsAccumulator = if (p.metrics.isEmpty) null else p.metrics.head

  override def apply(group: Array[Byte], rows: Iterator[Row], state: GroupState[Array[Byte]]): Iterator[Row] =
    call(group, rows, state, null)

  /**
   * One call for `group`. Where the state is per key ([[PerKeyChainFunction]]), every stream row is of `groupKey`
   * (null when the first operator's rule reads it as Kafka's null key).
   */
  private[chain] def call(
      group: Array[Byte],
      rows: Iterator[Row],
      state: GroupState[Array[Byte]],
      groupKey: ChainKey
  ): Iterator[Row] = {
    val batch =
      if (state.hasTimedOut) Array.empty[Row]
      else if (mapSide != null) rows.toArray(ChainFunction.RowTag)
      else rows.filter(_.getInt(Side) != Heartbeat).toArray(ChainFunction.RowTag)
    if (mapSide != null && mapSide.summaries(batch)) { // they share one group, of their own
      mapSide.summarize(batch, state.getCurrentWatermarkMs(), firstMetrics)
      return Iterator.empty
    }
    val nodes = tabulate(p.nodes.length)(i => p.nodes(i).newNode(if (p.metrics.isEmpty) null else p.metrics(i)))
    val restored = state.getOption match {
      case Some(bytes) => ChainState.read(bytes, p, nodes, group, groupKey)
      case None => ChainState.Restored(ChainState.NoEpoch, ChainState.newClocks(p))
    }
    val clocks = restored.clocks
    val seenThisRun = restored.epoch == p.epoch
    // Where state is per key, the gauges change by what this call changed (what state from an earlier run holds was
    // not counted in this run yet).
    val gaugesBefore =
      if (p.metrics.isEmpty || !p.perKey || !seenThisRun) null
      else tabulate(nodes.length)(i => p.nodes(i).gauges(nodes(i)))
    if (p.metrics.nonEmpty && !seenThisRun) nodes.indices.foreach(i => p.nodes(i).opened(nodes(i)))
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
    val now = state.getCurrentProcessingTimeMs()
    if (p.onWallClock) moveOnWallClock(chain, clocks, watermark, now, batch.nonEmpty, sink)
    if (mapSide != null) mapSide.feed(batch, groupKey, chain, sink, firstMetrics)
    else if (batch.nonEmpty) {
      if (batch.length > 1) java.util.Arrays.sort(batch, BySideThenArrival)
      var dropped = 0L
      var i = 0
      while (i < batch.length) {
        val row = batch(i)
        if (row.getInt(Side) == TableSide) chain.table(tableRecord(row), sink)
        else if (dropsForTime(row)) dropped += 1
        else chain.process(streamRecord(row, groupKey), sink)
        i += 1
      }
      if (firstMetrics != null) firstMetrics.count("dropped", dropped)
    }

    var holds = false
    var clockAhead = false
    var i = 0
    while (i < nodes.length) {
      clocks(i).foreach(_.observe(idleBase(chain, i, watermark), now))
      holds ||= !p.nodes(i).isEmpty(nodes(i))
      clockAhead ||= clocks(i).exists(_.aheadOf(watermark))
      i += 1
    }
    if (p.perKey && !holds && !clockAhead) {
      // A key's stream time is the watermark once it holds nothing; only an idle clock ahead of it must be kept.
      state.remove()
    } else if (
      // Kept even when every buffer is empty: a shard's node clocks are Kafka's stream times and must survive. A
      // heartbeat that released nothing changed nothing.
      batch.nonEmpty || !p.joinReleases || p.onWallClock ||
      nodes.head.asInstanceOf[JoinNode[ChainKey]].buffered != waiting
    ) {
      state.update(ChainState.write(p, nodes, clocks, p.epoch, groupKey))
    }
    if (p.metrics.nonEmpty) report(group, nodes, forwarded, gaugesBefore, state)
    if (p.wallClockOnly) {
      // A lone wall-clock suppress knows when its next entry is due on the wall clock: Spark fires a processing-time
      // timeout once the batch time passes it, and Spark refuses durations <= 0.
      val due = chain.nodes.head.nextDueStreamTime
      if (due != Long.MaxValue) state.setTimeoutDuration(math.max(1L, due - 1 - now))
    } else if (p.onWallClock) {
      // Called in every micro-batch (1 ms: the next one) while the chain holds anything or an idle clock ran ahead of
      // the watermark: the watermark, the wall clock or an idle clock may make something due, or let it be forgotten.
      if (holds || clockAhead) state.setTimeoutDuration(1L)
    } else if (p.followsWatermark) {
      val due = chain.nextDueStreamTime
      // Spark fires a timer once timer < watermark; the first node needs a call once due <= its stream time.
      if (due != Long.MaxValue) state.setTimeoutTimestamp(math.max(1L, due - 1))
    }
    out.iterator
  }

  /** Each node's call and gauges to its operator's metrics: a shard's gauges as they stand, a key's as changes. */
  private def report(
      group: Array[Byte],
      nodes: IndexedSeq[ChainNode[ChainKey]],
      forwarded: Array[Long],
      gaugesBefore: IndexedSeq[Seq[(String, Long)]],
      state: GroupState[Array[Byte]]
  ): Unit = {
    val shardNumber = java.util.Arrays.hashCode(group)
    val latency = math.max(0L, System.currentTimeMillis() - state.getCurrentProcessingTimeMs())
    var i = 0
    while (i < nodes.length) {
      val metrics = p.metrics(i)
      if (metrics != null) {
        p.nodes(i).report(nodes(i), NodeCall(forwarded(i), metrics, shardNumber, latency))
        val gauges = p.nodes(i).gauges(nodes(i))
        if (gauges.nonEmpty) {
          val before = if (gaugesBefore == null) Map.empty[String, Long] else gaugesBefore(i).toMap
          gauges.foreach { case (name, value) =>
            if (p.perKey) metrics.gaugeDelta(name, value - before.getOrElse(name, 0L))
            else metrics.gauge(name, shardNumber, value)
          }
        }
      }
      i += 1
    }
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

  /** The stream key of these values, or null where the first operator's rule reads them as Kafka's null key. */
  private[chain] def streamKey(bytes: Array[Byte], values: Row): ChainKey = {
    var nulls = 0
    var i = 0
    while (i < values.length) { if (values.isNullAt(i)) nulls += 1; i += 1 }
    if (p.inputRule.isNullKey(nulls, values.length)) null else new ChainKey(bytes, values)
  }

  private def streamKey(row: Row): ChainKey = {
    val user = row.getStruct(UserRow)
    val values = new Array[Any](p.streamKeys.length)
    var i = 0
    while (i < values.length) { values(i) = user.get(p.streamKeys(i)); i += 1 }
    streamKey(row.getAs[Array[Byte]](Key), new GenericRow(values))
  }

  /** A stream row the first operator drops for its event time (null, or before 1970), by its rule. */
  private def dropsForTime(row: Row): Boolean =
    p.inputRule.dropsTime(row.isNullAt(Time), if (row.isNullAt(Time)) 0L else row.getLong(Time))

  private def time(row: Row, side: String): Long = {
    if (row.isNullAt(Time)) {
      val what = if (join != null) s"a $side row has a null event time; every row needs one"
      else s"the event-time column '${p.timestampName}' is null in an input row; every row needs an event time"
      throw new IllegalStateException(
        s"${p.operator}: $what. Filter such rows out (or fill them) before the operator."
      )
    }
    val ms = row.getLong(Time)
    if (ms < 0 && p.inputRule.refusesPreEpoch) {
      throw new IllegalStateException(
        s"${p.operator}: an input row has the event time ${row.getStruct(UserRow).get(p.inputSchema.fieldIndex(
            p.timestampName
          ))} (before 1970-01-01), in column '${p.timestampName}'. Spark's event-time watermark " +
          "never goes below 1970-01-01, so suppress cannot keep time for such records. Filter them out, or shift " +
          "the event times of the whole stream to after 1970 before the operator."
      )
    }
    ms
  }

  private def streamRecord(row: Row, groupKey: ChainKey): ChainRecord[ChainKey] = {
    val user = row.getStruct(UserRow)
    val deleted =
      if (join != null) join.valueIsNull(user)
      else p.tombstone.exists(c => !user.isNullAt(c) && user.getBoolean(c))
    val window = p.window.map(w => Bounds(w.start(user, p.operator), w.end(user, p.operator))).orNull
    ChainRecord(if (p.perKey) groupKey else streamKey(row), window, user, time(row, "stream"), deleted)
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

private object ChainFunction {
  // Given once: an implicit ClassTag[Row] is looked up again for every group.
  val RowTag: ClassTag[Row] = ClassTag(classOf[Row])
}

/**
 * The chain's function where its state is per key (`ChainParams.perKey`): Spark groups by the key's own columns, and
 * each call encodes its key once (the bytes that order and identify keys in the chain, [[ChainKey]]) instead of every
 * row carrying them.
 */
final class PerKeyChainFunction(p: ChainParams, encoder: KeyEncoding.Encoder)
    extends ((Row, Iterator[Row], GroupState[Array[Byte]]) => Iterator[Row])
    with Serializable {
  private val chain = new ChainFunction(p)

  override def apply(key: Row, rows: Iterator[Row], state: GroupState[Array[Byte]]): Iterator[Row] = {
    val bytes = encoder.encode(key)
    chain.call(bytes, rows, state, chain.streamKey(bytes, key))
  }
}
