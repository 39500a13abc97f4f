package io.github.sparksuppress.spark.chain

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.core._
import io.github.sparksuppress.core.chain.{ChainNode, ChainRecord, WindowedAggregateNode}
import io.github.sparksuppress.spark.window._

/**
 * A windowed aggregation's stored state (a chain of one): its windows and buffers come back as stored, and the checks
 * that keep a restart from misreading another query's state: the operator's name and the fingerprint of its windows,
 * aggregates and key types.
 */
class WindowedAggregateStateSuite extends AnyFunSuite {
  private val schema = StructType(Seq(
    StructField("k", StringType),
    StructField("ts", TimestampType),
    StructField("amount", LongType),
    StructField("label", StringType)
  ))
  private val aggregates: Array[AggregateColumn] = Array(
    CountAggregate("n", Array.empty),
    SumAggregate("total", 0, LongType, LongType, OverflowMode.Fail),
    PositionalAggregate("first", 1, StringType, isLast = false, ignoreNulls = false)
  )
  // The aggregates read the record's `amount` and `label`.
  private val inputs = new AggregateInputs(
    aggregates,
    Array(
      org.apache.spark.sql.catalyst.expressions.BoundReference(2, LongType, nullable = true),
      org.apache.spark.sql.catalyst.expressions.BoundReference(3, StringType, nullable = true)
    ),
    StructType(Seq(StructField("in0", LongType), StructField("in1", StringType))),
    schema
  )
  private def spec(definition: WindowDefinition, fingerprint: Long) = WindowedAggregateNodeSpec(
    "aggregate_windowed 'counts'",
    definition,
    EmitMode.OnWindowClose,
    inputs,
    keyColumns = 1,
    retractions = false,
    fingerprint = fingerprint
  )
  private val tumbling = TimeWindowDefinition(10, 10, 0)
  private val keys = new ChainKeyCodec(StructType(Seq(StructField("k", StringType))))
  private def params(s: WindowedAggregateNodeSpec, name: Option[String]) = ChainParams(
    s.operator,
    schema,
    "ts",
    None,
    None,
    IndexedSeq(s),
    keys,
    followsWatermark = true,
    explicitNames = IndexedSeq(name),
    perKey = true
  )
  private def node(n: ChainNode[ChainKey]) =
    n.asInstanceOf[WindowedAggregateNode[ChainKey, InputRecord, AggregateBuffer]]

  // The key's bytes and values, unlike anything else in the state: per-key state must store neither.
  private val group = Array[Byte](0x7f, 0x7e, 0x7d)
  private val keyValue = "key-value-7"
  private val groupKey = new ChainKey(group, Row(keyValue))

  private def counted(s: WindowedAggregateNodeSpec): ChainNode[ChainKey] = {
    val n = s.newNode()
    n.process(ChainRecord(groupKey, null, Row(keyValue, new java.sql.Timestamp(3L), 7L, "x"), 3L, false), null)
    n
  }

  private def stored(s: WindowedAggregateNodeSpec, name: Option[String] = Some("counts")): Array[Byte] =
    ChainState.write(params(s, name), IndexedSeq(counted(s)), IndexedSeq(None), epoch = 1L, groupKey)

  private def containsSlice(bytes: Array[Byte], slice: Array[Byte]): Boolean =
    bytes.indices.exists(i => bytes.slice(i, i + slice.length).sameElements(slice))

  private def restoredKey(back: ChainNode[ChainKey]): ChainKey = node(back).aggregators.firstEntry().getKey

  test("windows and buffers come back as stored; first/last forget the call's arrival order") {
    val s = spec(tumbling, 1L)
    val back = s.newNode()
    ChainState.read(stored(s), params(s, Some("counts")), IndexedSeq(back), group, groupKey)
    val a = node(back)
    assert(a.streamTime === 3L)
    val windows = a.aggregators.firstEntry().getValue.windows
    assert(windows.size === 1 && windows(0).start === 0L && windows(0).timestamp === 3L)
    assert(inputs.buffers.results(windows(0).buffer).toSeq === Seq(1L, 7L, "x"))
    assert(windows(0).buffer.parts(2).asInstanceOf[PositionalAggregate.Acc].seq === Long.MinValue)
  }

  test("state written for other windows or aggregates, or by another named operator, is refused with the fix") {
    val written = stored(spec(tumbling, 1L))
    val other = spec(TimeWindowDefinition(20, 20, 0), 2L)
    val changed = intercept[IllegalStateException](ChainState.read(
      written,
      params(other, Some("counts")),
      IndexedSeq(other.newNode()),
      group,
      groupKey
    ))
    assert(changed.getMessage.startsWith("aggregate_windowed 'counts': the checkpoint's state was written for other " +
      "windows, aggregations or key types") && changed.getMessage.contains("start from a new checkpoint"))
    val same = spec(tumbling, 1L)
    val renamed = intercept[IllegalStateException](
      ChainState.read(written, params(same, Some("sessions")), IndexedSeq(same.newNode()), group, groupKey)
    )
    assert(renamed.getMessage.contains("belongs to the operator named 'counts'"))
    val future = written.clone()
    future(0) = 9
    assert(intercept[IllegalStateException](
      ChainState.read(future, params(same, Some("counts")), IndexedSeq(same.newNode()), group, groupKey)
    ).getMessage.contains("has format 9"))
  }

  test("per-key state (format 7) stores neither its key's bytes nor its values: the group gives them back") {
    val s = spec(tumbling, 1L)
    val bytes = stored(s)
    assert(bytes(0) === ChainState.FormatBareKeys)
    assert(!containsSlice(bytes, group), "the key's bytes are stored")
    assert(!containsSlice(bytes, keyValue.getBytes(UTF_8)), "the key's values are stored")
    val back = s.newNode()
    ChainState.read(bytes, params(s, Some("counts")), IndexedSeq(back), group, groupKey)
    assert(restoredKey(back) eq groupKey)
    assert(inputs.buffers.results(node(back).aggregators.firstEntry().getValue.windows(0).buffer).toSeq ===
      Seq(1L, 7L, "x"))
  }

  test("per-key state refuses to store, or read back, a key other than its group's") {
    val s = spec(tumbling, 1L)
    val other = new ChainKey(Array[Byte](1), Row("b"))
    val stray = intercept[IllegalStateException](
      ChainState.write(params(s, Some("counts")), IndexedSeq(counted(s)), IndexedSeq(None), epoch = 1L, other)
    )
    assert(stray.getMessage.contains("other than its group's"), stray.getMessage)
    val keyless = intercept[IllegalStateException](
      ChainState.read(stored(s), params(s, Some("counts")), IndexedSeq(s.newNode()), group, null)
    )
    assert(keyless.getMessage.contains("cannot be read") && keyless.getMessage.contains("other than its group's"))
  }

  test("per-key state of format 6 (each key's values, not its bytes) still reads") {
    val s = spec(tumbling, 1L)
    val out = new ByteWriter()
    out.writeByte(ChainState.FormatCompact)
    out.writeVarLong(1)
    out.writeByte(1) // aggregate_windowed
    out.writeBytes("counts".getBytes(UTF_8))
    out.writeZigZag(1L)
    s.write(counted(s), out, keys.ofGroup(group)) // as format 6 stored it: the key's values alone
    out.writeByte(0)
    out.writeZigZag(1L)
    assert(containsSlice(out.toByteArray, keyValue.getBytes(UTF_8)) && !containsSlice(out.toByteArray, group))
    val back = s.newNode()
    val restored = ChainState.read(out.toByteArray, params(s, Some("counts")), IndexedSeq(back), group, groupKey)
    assert(restored.epoch === 1L)
    assert(restoredKey(back).bytes.sameElements(group) && restoredKey(back).values === Row(keyValue))
    assert(inputs.buffers.results(node(back).aggregators.firstEntry().getValue.windows(0).buffer).toSeq ===
      Seq(1L, 7L, "x"))
  }

  test("per-key state of format 5 (kind by name, every key with its bytes) still reads") {
    val s = spec(tumbling, 1L)
    val out = new ByteWriter()
    out.writeByte(ChainState.FormatWithJoinDescriptors)
    out.writeVarLong(1)
    out.writeBytes("aggregate_windowed".getBytes(UTF_8))
    out.writeBytes("counts".getBytes(UTF_8))
    out.writeZigZag(1L)
    s.write(counted(s), out, keys) // the node's own layout is the same in both formats; the key codec is not
    out.writeByte(0)
    out.writeZigZag(1L)
    assert(containsSlice(out.toByteArray, group))
    val back = s.newNode()
    // Another group's bytes: format 5 reads each key's own.
    val restored =
      ChainState.read(out.toByteArray, params(s, Some("counts")), IndexedSeq(back), Array[Byte](1), groupKey)
    assert(restored.epoch === 1L)
    assert(restoredKey(back).bytes.sameElements(group) && restoredKey(back).values === Row(keyValue))
    assert(inputs.buffers.results(node(back).aggregators.firstEntry().getValue.windows(0).buffer).toSeq ===
      Seq(1L, 7L, "x"))
  }
}
