package io.github.sparksuppress.core

import org.scalatest.funsuite.AnyFunSuite

class KeyWindowsCodecSuite extends AnyFunSuite {

  private def roundTrip[B](d: WindowDefinition, w: KeyWindows[B], codec: Codec[B]): KeyWindows[B] = {
    val out = new ByteWriter()
    KeyWindowsCodec.write(w, d, out, codec)
    val in = new ByteReader(out.toByteArray)
    val back = KeyWindowsCodec.read(in, d, codec)
    assert(in.remaining === 0)
    back
  }

  private def view[B](w: KeyWindows[B]) = w.iterator.map(e => (e.start, e.end, e.timestamp, e.buffer, e.closed)).toList

  test("time, sliding and session windows survive their stored form, order and closed marks included") {
    val time = TimeWindowDefinition(10, 5, 0)
    val tw = WindowedAggregator.emptyWindows[String](time)
    tw.insert(new WindowEntry(5, 15, 7, "b")); tw.insert(new WindowEntry(0, 10, 9, "a"))
    assert(view(roundTrip(time, tw, Codec.utf8String)) === view(tw))

    val sliding = SlidingWindowDefinition(10, 3)
    val sw = WindowedAggregator.emptyWindows[Long](sliding)
    val closed = new WindowEntry(0L, 10L, 10L, 1L)
    closed.closed = true
    sw.insert(closed); sw.insert(new WindowEntry(11L, 21L, 15L, 2L))
    assert(view(roundTrip(sliding, sw, Codec.long)) === view(sw))

    val session = SessionWindowDefinition(5, 0)
    val ss = WindowedAggregator.emptyWindows[Long](session)
    ss.insert(new WindowEntry(100L, 130L, 130L, 4L)); ss.insert(new WindowEntry(0L, 3L, 3L, 2L))
    val back = roundTrip(session, ss, Codec.long)
    assert(view(back) === view(ss) && back(0).start === 0L)
  }
}
