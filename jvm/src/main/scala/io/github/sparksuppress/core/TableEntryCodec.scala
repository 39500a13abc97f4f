package io.github.sparksuppress.core

/**
 * The stored form of a [[TableEntry]]: a format byte, the kind (0 latest value, 1 version history), then the versions
 * (a history starts with their count), each a timestamp (zig-zag), a presence byte (0 for a tombstone) and the value.
 * The retention is not stored: the operator's current one applies.
 */
object TableEntryCodec {
  val FormatVersion: Int = 1

  def write[V >: Null](entry: TableEntry[V], out: ByteWriter)(implicit vc: Codec[V]): Unit = {
    out.writeByte(FormatVersion)
    def version(ts: Long, value: V): Unit = {
      out.writeZigZag(ts)
      if (value == null) out.writeByte(0) else { out.writeByte(1); vc.write(out, value) }
    }
    entry match {
      case l: TableEntry.Latest[V] =>
        out.writeByte(0)
        version(l.timestamp, l.value)
      case v: TableEntry.Versioned[V] =>
        out.writeByte(1)
        out.writeVarLong(v.history.size.toLong)
        v.history.foreach(version)
    }
  }

  /** Reads an entry as `spec`'s kind: a history read as a latest value keeps its newest version, and back. */
  def read[V >: Null](in: ByteReader, spec: StreamTableJoinSpec)(implicit vc: Codec[V]): TableEntry[V] = {
    val format = in.readByte()
    if (format != FormatVersion) {
      throw new IllegalStateException(
        s"stored table entry has format version $format; this spark-suppress reads version $FormatVersion. " +
          "Restart from a checkpoint written by a compatible spark-suppress version."
      )
    }
    def version(): (Long, V) = {
      val ts = in.readZigZag()
      (ts, if (in.readByte() == 0) null else vc.read(in))
    }
    val entry = TableEntry[V](spec)
    in.readByte() match {
      case 0 =>
        val (ts, v) = version()
        entry.write(ts, v, TableStreamTime.None)
      case 1 =>
        val n = in.readVarLong()
        var i = 0L
        while (i < n) { val (ts, v) = version(); entry.write(ts, v, TableStreamTime.None); i += 1 }
      case other => throw new IllegalStateException(s"malformed table entry: kind $other")
    }
    entry
  }
}
