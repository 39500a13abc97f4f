package io.github.sparksuppress.core

/** A growable byte sink for compact state encodings: varints, fixed longs, length-prefixed byte arrays. */
final class ByteWriter(initialCapacity: Int = 64) {
  private[this] var buf = new Array[Byte](math.max(initialCapacity, 16))
  private[this] var pos = 0

  def size: Int = pos

  private[this] def ensure(extra: Int): Unit =
    if (pos + extra > buf.length) {
      buf = java.util.Arrays.copyOf(buf, math.max(buf.length * 2, pos + extra))
    }

  def writeByte(b: Int): Unit = { ensure(1); buf(pos) = b.toByte; pos += 1 }

  /** Unsigned LEB128 of a long read as unsigned. */
  def writeVarLong(v: Long): Unit = {
    ensure(10)
    var x = v
    while ((x & ~0x7fL) != 0L) { buf(pos) = ((x & 0x7f) | 0x80).toByte; pos += 1; x >>>= 7 }
    buf(pos) = x.toByte
    pos += 1
  }

  /** Zig-zag varint: small magnitudes of either sign stay short. */
  def writeZigZag(v: Long): Unit = writeVarLong((v << 1) ^ (v >> 63))

  /** Length-prefixed bytes; null is written as its own marker (length prefix 0, others shifted by one). */
  def writeBytes(bytes: Array[Byte]): Unit = {
    if (bytes == null) { writeVarLong(0L); return }
    writeVarLong(bytes.length.toLong + 1)
    ensure(bytes.length)
    System.arraycopy(bytes, 0, buf, pos, bytes.length)
    pos += bytes.length
  }

  /** Starts a length-prefixed section; pass the mark to [[endLength]] once its content is written. */
  def beginLength(): Int = { writeByte(0); pos }

  /** Fills in the varint length of the section begun at `mark`, moving its content if the length needs more room. */
  def endLength(mark: Int): Unit = {
    val len = pos - mark
    if (len < 0x80) buf(mark - 1) = len.toByte
    else {
      var extra = 0
      var x = len >>> 7
      while (x != 0) { extra += 1; x >>>= 7 }
      ensure(extra)
      System.arraycopy(buf, mark, buf, mark + extra, len)
      var p = mark - 1
      var v = len
      while ((v & ~0x7f) != 0) { buf(p) = ((v & 0x7f) | 0x80).toByte; p += 1; v >>>= 7 }
      buf(p) = v.toByte
      pos += extra
    }
  }

  def toByteArray: Array[Byte] = java.util.Arrays.copyOf(buf, pos)
}

/** Reads what [[ByteWriter]] wrote. Malformed input raises [[IllegalStateException]]. */
final class ByteReader(buf: Array[Byte], private[this] var pos: Int = 0) {
  def remaining: Int = buf.length - pos

  def readByte(): Int = {
    if (pos >= buf.length) throw new IllegalStateException("truncated state: expected another byte")
    val b = buf(pos); pos += 1; b & 0xff
  }

  def readVarLong(): Long = {
    var shift = 0
    var result = 0L
    var b = 0
    while ({ b = readByte(); result |= (b & 0x7fL) << shift; (b & 0x80) != 0 }) {
      shift += 7
      if (shift > 63) throw new IllegalStateException("malformed state: varint longer than 10 bytes")
    }
    result
  }

  def skip(n: Int): Unit = {
    if (n < 0 || n > remaining) throw new IllegalStateException(s"malformed state: cannot skip $n bytes")
    pos += n
  }

  def readZigZag(): Long = { val u = readVarLong(); (u >>> 1) ^ -(u & 1) }

  /**
   * How many items follow, each stored in at least 1/`perByte` of a byte (`perByte` = 8 where a null bitmap is all an
   * item may take). A count the remaining bytes cannot hold is malformed: the caller would otherwise allocate for it
   * and run out of memory on damaged state instead of failing with a message.
   */
  def readCount(what: String, perByte: Int = 1): Int = {
    val n = readVarLong()
    if (n < 0 || n > remaining.toLong * perByte) {
      throw new IllegalStateException(s"malformed state: $n $what in the $remaining bytes left")
    }
    n.toInt
  }

  def readBytes(): Array[Byte] = {
    val prefixed = readVarLong()
    if (prefixed == 0L) return null
    val n = prefixed - 1
    if (n < 0 || n > remaining) throw new IllegalStateException(s"malformed state: byte string of length $n")
    val out = java.util.Arrays.copyOfRange(buf, pos, pos + n.toInt)
    pos += n.toInt
    out
  }
}

/** How one key or value type is written into compact state. */
trait Codec[T] {
  def write(out: ByteWriter, value: T): Unit
  def read(in: ByteReader): T
}

object Codec {
  implicit val bytes: Codec[Array[Byte]] = new Codec[Array[Byte]] {
    def write(out: ByteWriter, value: Array[Byte]): Unit = out.writeBytes(value)
    def read(in: ByteReader): Array[Byte] = in.readBytes()
  }

  implicit val utf8String: Codec[String] = new Codec[String] {
    def write(out: ByteWriter, value: String): Unit =
      out.writeBytes(if (value == null) null else value.getBytes(java.nio.charset.StandardCharsets.UTF_8))
    def read(in: ByteReader): String = {
      val b = in.readBytes()
      if (b == null) null else new String(b, java.nio.charset.StandardCharsets.UTF_8)
    }
  }

  implicit val long: Codec[Long] = new Codec[Long] {
    def write(out: ByteWriter, value: Long): Unit = out.writeZigZag(value)
    def read(in: ByteReader): Long = in.readZigZag()
  }
}
