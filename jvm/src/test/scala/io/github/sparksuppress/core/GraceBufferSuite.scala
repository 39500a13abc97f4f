package io.github.sparksuppress.core

import org.scalatest.funsuite.AnyFunSuite

/** KIP-923's stream-side buffer: time order, the inclusive release rule, lateness, and the stored form. */
class GraceBufferSuite extends AnyFunSuite {

  private def released(b: GraceBuffer[String, String]): Seq[(String, Long, String)] = {
    val out = Seq.newBuilder[(String, Long, String)]
    b.releaseDue(e => out += ((e.key, e.timestamp, e.value)))
    out.result()
  }

  test("records are released once ts <= streamTime - grace (inclusive), ordered by (ts, key, arrival)") {
    val b = new GraceBuffer[String, String](2)
    b.put("b", 1, "b1", 1)
    b.put("a", 1, "a1", 1)
    b.put("a", 1, "a1'", 1)
    b.put("c", 0, "c0", 1)
    assert(released(b) === Nil, "stream time 1: nothing is 2 behind")
    b.put("z", 3, "z3", 1)
    assert(released(b) === Seq(("c", 0L, "c0"), ("a", 1L, "a1"), ("a", 1L, "a1'"), ("b", 1L, "b1")))
    assert(b.numRecords === 1 && b.sizeBytes === 1)
  }

  test("grace 0: a record is buffered and released in the same step") {
    val b = new GraceBuffer[String, String](0)
    b.put("k", 5, "v", 1)
    assert(released(b) === Seq(("k", 5L, "v")))
  }

  test("a record is late iff streamTime - grace > ts; the boundary itself is not late") {
    val b = new GraceBuffer[String, String](2)
    assert(!b.isLate(Long.MinValue + 1), "nothing is late before the first record")
    b.put("k", 3, "v", 1)
    assert(b.isLate(0) && !b.isLate(1))
    intercept[IllegalArgumentException](b.put("k", 0, "late", 1))
    assert(b.streamTime === 3)
  }

  test("the stored form restores entries, stream time and arrival order") {
    val b = new GraceBuffer[String, String](10)
    Seq(("k", 5L, "first"), ("k", 5L, "second"), ("a", 7L, "x"), ("k", 2L, "early")).foreach {
      case (k, ts, v) => b.put(k, ts, v, v.length.toLong)
    }
    val out = new ByteWriter()
    GraceBufferCodec.write(b, out)(Codec.utf8String, Codec.utf8String)
    val restored = new GraceBuffer[String, String](10)
    GraceBufferCodec.read(new ByteReader(out.toByteArray), restored)(Codec.utf8String, Codec.utf8String)
    assert(restored.streamTime === 7 && restored.numRecords === 4 && restored.sizeBytes === b.sizeBytes)
    restored.put("k", 5, "third", 5)
    restored.put("z", 100, "z", 1)
    assert(released(restored).map(_._3) === Seq("early", "first", "second", "third", "x"))
  }
}
