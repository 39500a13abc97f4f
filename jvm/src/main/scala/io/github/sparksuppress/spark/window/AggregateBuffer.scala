package io.github.sparksuppress.spark.window

import io.github.sparksuppress.core.{Aggregation, ByteReader, ByteWriter, Codec}
import io.github.sparksuppress.spark.common._

/** The aggregation buffer of one window: one accumulator per aggregate column, in output order. */
private[sparksuppress] final class AggregateBuffer(val parts: Array[AggregatePartial]) {
  override def toString: String = parts.map(_.result()).mkString("AggregateBuffer(", ", ", ")")
}

/**
 * The user's aggregate columns as one core [[Aggregation]] over [[AggregateBuffer]]s: records go into every
 * accumulator, buffers merge part by part. Buffers are mutable: `add` and `merge` change the first argument.
 */
private[sparksuppress] final class AggregateBuffers(val aggregates: Array[AggregateColumn])
    extends Aggregation[InputRecord, AggregateBuffer] {

  def initial(): AggregateBuffer = {
    // A loop, not `map`: this runs per window and partial, and `map` looks up a ClassTag each time.
    val parts = new Array[AggregatePartial](aggregates.length)
    var i = 0
    while (i < parts.length) { parts(i) = aggregates(i).newAccumulator(); i += 1 }
    new AggregateBuffer(parts)
  }

  def add(buffer: AggregateBuffer, value: InputRecord): AggregateBuffer = {
    val parts = buffer.parts
    var i = 0
    while (i < parts.length) { parts(i).add(value); i += 1 }
    buffer
  }

  def merge(buffer: AggregateBuffer, other: AggregateBuffer): AggregateBuffer = {
    var i = 0
    while (i < buffer.parts.length) { buffer.parts(i).merge(other.parts(i)); i += 1 }
    buffer
  }

  def copy(buffer: AggregateBuffer): AggregateBuffer = new AggregateBuffer(buffer.parts.map(_.copy()))

  def results(buffer: AggregateBuffer): Array[Any] = buffer.parts.map(_.result())

  /** Buffers in transit (partials before the shuffle): written as they are. */
  val partialCodec: Codec[AggregateBuffer] = new Codec[AggregateBuffer] {
    def write(out: ByteWriter, value: AggregateBuffer): Unit = value.parts.foreach(_.write(out))
    def read(in: ByteReader): AggregateBuffer = {
      val b = initial()
      b.parts.foreach(_.read(in))
      b
    }
  }

  /** Buffers in stored state: as partials, settled when read back (see [[AggregatePartial.settle]]). */
  val stateCodec: Codec[AggregateBuffer] = new Codec[AggregateBuffer] {
    def write(out: ByteWriter, value: AggregateBuffer): Unit = partialCodec.write(out, value)
    def read(in: ByteReader): AggregateBuffer = {
      val b = partialCodec.read(in)
      b.parts.foreach(_.settle())
      b
    }
  }
}
