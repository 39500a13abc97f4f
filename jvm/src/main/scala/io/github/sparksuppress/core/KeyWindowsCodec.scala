package io.github.sparksuppress.core

/**
 * The stored form of one key's windows, in store order:
 *
 * {{{
 *   count (varint) | per window: start (zig-zag, delta to the previous start) | end - start (varint; sessions
 *   only, time and sliding windows derive it) | timestamp - start (zig-zag) | closed (1 byte; sliding only)
 *   | buffer (the aggregation's codec)
 * }}}
 */
object KeyWindowsCodec {

  def write[B](windows: KeyWindows[B], definition: WindowDefinition, out: ByteWriter, buffers: Codec[B]): Unit = {
    out.writeVarLong(windows.size.toLong)
    var previous = 0L
    var i = 0
    while (i < windows.size) {
      val e = windows(i)
      out.writeZigZag(e.start - previous)
      previous = e.start
      if (definition.isInstanceOf[SessionWindowDefinition]) out.writeVarLong(e.end - e.start)
      out.writeZigZag(e.timestamp - e.start)
      if (definition.isInstanceOf[SlidingWindowDefinition]) out.writeByte(if (e.closed) 1 else 0)
      buffers.write(out, e.buffer)
      i += 1
    }
  }

  def read[B](in: ByteReader, definition: WindowDefinition, buffers: Codec[B]): KeyWindows[B] = {
    val windows = WindowedAggregator.emptyWindows[B](definition)
    val n = in.readVarLong()
    if (n < 0 || n > Int.MaxValue) throw new IllegalStateException(s"malformed state: $n windows")
    var start = 0L
    var i = 0L
    while (i < n) {
      start += in.readZigZag()
      val end = definition match {
        case t: TimeWindowDefinition => t.endOf(start)
        case s: SlidingWindowDefinition => TimeMath.plus(start, s.timeDifferenceMs)
        case _: SessionWindowDefinition => start + in.readVarLong()
      }
      val timestamp = start + in.readZigZag()
      val closed = definition.isInstanceOf[SlidingWindowDefinition] && in.readByte() != 0
      val e = new WindowEntry[B](start, end, timestamp, buffers.read(in))
      e.closed = closed
      windows.insert(e)
      i += 1
    }
    windows
  }
}
