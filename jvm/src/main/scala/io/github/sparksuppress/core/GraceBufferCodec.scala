package io.github.sparksuppress.core

/**
 * The stored form of a [[GraceBuffer]]: a format byte, its stream time and next sequence number, the entry count,
 * then per entry timestamp, sequence number and size (zig-zag varints) followed by key and value. The buffer's order
 * is total (ties go to key, then sequence), so reading entries back in any order rebuilds it.
 */
object GraceBufferCodec {
  val FormatVersion: Int = 1

  def write[K, V](buffer: GraceBuffer[K, V], out: ByteWriter)(implicit kc: Codec[K], vc: Codec[V]): Unit = {
    out.writeByte(FormatVersion)
    out.writeZigZag(buffer.streamTime)
    out.writeZigZag(buffer.nextSequence)
    out.writeVarLong(buffer.numRecords.toLong)
    buffer.foreach { e =>
      out.writeZigZag(e.timestamp)
      out.writeZigZag(e.seq)
      out.writeZigZag(e.sizeBytes)
      kc.write(out, e.key)
      vc.write(out, e.value)
    }
  }

  /** Fills `into`, which must be empty. */
  def read[K, V](in: ByteReader, into: GraceBuffer[K, V])(implicit kc: Codec[K], vc: Codec[V]): Unit = {
    require(into.isEmpty, "read a stored grace buffer into an empty one")
    val version = in.readByte()
    if (version != FormatVersion) {
      throw new IllegalStateException(
        s"stored grace buffer has format version $version; this spark-suppress reads version $FormatVersion. " +
          "Restart from a checkpoint written by a compatible spark-suppress version."
      )
    }
    val streamTime = in.readZigZag()
    val nextSeq = in.readZigZag()
    val n = in.readVarLong()
    val entries = Iterator.fill(n.toInt) {
      val ts = in.readZigZag()
      val seq = in.readZigZag()
      val size = in.readZigZag()
      val key = kc.read(in)
      GraceBuffer.Entry(key, ts, seq, vc.read(in), size)
    }
    into.restore(streamTime, nextSeq, entries)
  }
}
