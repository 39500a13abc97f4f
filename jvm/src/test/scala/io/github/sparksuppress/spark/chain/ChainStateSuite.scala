package io.github.sparksuppress.spark.chain

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.core.{ByteWriter, EntrySizeModel, SuppressionSpec}
import io.github.sparksuppress.core.chain.SuppressNode
import io.github.sparksuppress.spark.common.RowCodec

/**
 * A chain's stored state across versions: the current format (6) round-trips, and a suppress's state in format 1
 * (written before node names, run epochs, row descriptors and fingerprints) still reads, so that checkpoints of
 * earlier releases restart.
 */
class ChainStateSuite extends AnyFunSuite {
  private val schema =
    StructType(Seq(StructField("key", StringType), StructField("ts", TimestampType), StructField("value", LongType)))
  private val keySchema = StructType(Seq(StructField("key", StringType)))
  private val keys = new ChainKeyCodec(keySchema)
  private val spec = SuppressNodeSpec(
    "suppress 'alerts'",
    SuppressionSpec("alerts", timeLimitMs = 1000),
    untilWindowCloses = false,
    schema,
    Array(0),
    Array(2),
    EntrySizeModel.Kafka
  )
  private def params(name: Option[String]) = ChainParams(
    "suppress 'alerts'",
    schema,
    "ts",
    None,
    None,
    IndexedSeq(spec),
    keys,
    followsWatermark = true,
    explicitNames = IndexedSeq(name)
  )
  private val key = new ChainKey("a".getBytes(UTF_8), Row("a"))
  private val shard = Array[Byte](0, 1)
  private val row = Row("a", new java.sql.Timestamp(5000L), 7L)

  private def buffered(node: SuppressNode[ChainKey]): Seq[(String, Long, Any, Long)] = {
    val out = Seq.newBuilder[(String, Long, Any, Long)]
    node.suppressor.buffer.foreach { r =>
      val c = r.value
      out += ((c.key.values.getString(0), c.timestamp, c.value.asInstanceOf[Row].get(2), r.bufferTime))
    }
    out.result()
  }

  test("the current format round-trips a suppress node: stream time, buffer, run epoch") {
    val p = params(Some("alerts"))
    val node = spec.newNode().asInstanceOf[SuppressNode[ChainKey]]
    node.process(io.github.sparksuppress.core.chain.ChainRecord(key, null, row, 5000L, false), null)
    val bytes = ChainState.write(p, IndexedSeq(node), IndexedSeq(None), epoch = 42L, groupKey = null)
    val back = spec.newNode().asInstanceOf[SuppressNode[ChainKey]]
    val restored = ChainState.read(bytes, p, IndexedSeq(back), shard, null)
    assert(restored.epoch === 42L)
    assert(back.streamTime === 5000L)
    assert(buffered(back) === Seq(("a", 5000L, 7L, 5000L)))
  }

  test("the current format refuses state stored under another operator's name") {
    val node = spec.newNode()
    val bytes =
      ChainState.write(params(Some("orders")), IndexedSeq(node), IndexedSeq(None), epoch = 1L, groupKey = null)
    val e = intercept[IllegalStateException](ChainState.read(
      bytes,
      params(Some("alerts")),
      IndexedSeq(spec.newNode()),
      shard,
      null
    ))
    assert(e.getMessage.contains("belongs to the operator named 'orders'"), e.getMessage)
  }

  test("a damaged count fails as malformed state naming the operator, before anything is allocated for it") {
    // Format 3, one suppress node, its stream time, then a row descriptor claiming a billion columns in 0 bytes.
    val out = new ByteWriter()
    out.writeByte(3)
    out.writeVarLong(1)
    out.writeBytes("suppress".getBytes(UTF_8))
    out.writeBytes("".getBytes(UTF_8))
    out.writeZigZag(5000L)
    out.writeVarLong(1000000000L)
    val e = intercept[IllegalStateException](
      ChainState.read(out.toByteArray, params(Some("alerts")), IndexedSeq(spec.newNode()), shard, null)
    )
    assert(e.getMessage.startsWith("suppress 'alerts': the stored chain state cannot be read"), e.getMessage)
    assert(e.getMessage.contains("malformed state: 1000000000 columns in the 0 bytes left"), e.getMessage)
  }

  test("a suppress's state in format 1 (earlier releases) still reads") {
    // Format 1, laid out by hand: format | node count | kind | stream time | buffer (format, count, then per entry
    // buffer time, timestamp, size, key with window, and the record: key, window, timestamp, tombstone, row).
    val out = new ByteWriter()
    out.writeByte(1)
    out.writeVarLong(1)
    out.writeBytes("suppress".getBytes(UTF_8))
    out.writeZigZag(5000L)
    out.writeByte(1)
    out.writeVarLong(1)
    out.writeZigZag(5000L)
    out.writeZigZag(5000L)
    out.writeZigZag(40L)
    keys.write(out, key)
    out.writeByte(0)
    keys.write(out, key)
    out.writeByte(0)
    out.writeZigZag(5000L)
    out.writeByte(0)
    out.writeByte(1)
    new RowCodec(schema).writeRow(out, row)
    val node = spec.newNode().asInstanceOf[SuppressNode[ChainKey]]
    val restored = ChainState.read(out.toByteArray, params(Some("alerts")), IndexedSeq(node), shard, null)
    assert(restored.epoch === ChainState.NoEpoch)
    assert(restored.clocks === IndexedSeq(None))
    assert(node.streamTime === 5000L)
    assert(buffered(node) === Seq(("a", 5000L, 7L, 5000L)))
  }
}
