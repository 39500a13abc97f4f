package io.github.sparksuppress.core

/**
 * The compact stored form of a [[SuppressionBuffer]]: a format byte, the entry count, then per entry the buffer time,
 * timestamp and size (zig-zag varints) followed by key and value. Entries are written in heap order; the buffer's
 * order is total (ties go to the key), so reading them back rebuilds the same eviction order.
 */
object SuppressionBufferCodec {
  val FormatVersion: Int = 1

  def write[K, V](buffer: SuppressionBuffer[K, V], out: ByteWriter)(implicit kc: Codec[K], vc: Codec[V]): Unit = {
    out.writeByte(FormatVersion)
    out.writeVarLong(buffer.numRecords.toLong)
    buffer.foreach { r =>
      out.writeZigZag(r.bufferTime)
      out.writeZigZag(r.timestamp)
      out.writeZigZag(r.sizeBytes)
      kc.write(out, r.key)
      vc.write(out, r.value)
    }
  }

  def toBytes[K: Codec, V: Codec](buffer: SuppressionBuffer[K, V]): Array[Byte] = {
    val out = new ByteWriter(16 + buffer.numRecords * 32)
    write(buffer, out)
    out.toByteArray
  }

  /** Adds the stored entries to `into` (normally empty). */
  def read[K, V](in: ByteReader, into: SuppressionBuffer[K, V])(implicit kc: Codec[K], vc: Codec[V]): Unit = {
    val version = in.readByte()
    if (version != FormatVersion) {
      throw new IllegalStateException(
        s"stored suppression buffer has format version $version; this spark-suppress reads version " +
          s"$FormatVersion. Restart from a checkpoint written by a compatible spark-suppress version."
      )
    }
    val n = in.readVarLong()
    var i = 0L
    while (i < n) {
      val bufferTime = in.readZigZag()
      val timestamp = in.readZigZag()
      val size = in.readZigZag()
      val key = kc.read(in)
      val value = vc.read(in)
      into.put(key, value, timestamp, bufferTime, size)
      i += 1
    }
  }
}
