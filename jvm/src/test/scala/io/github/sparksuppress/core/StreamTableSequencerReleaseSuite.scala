package io.github.sparksuppress.core

import org.scalatest.funsuite.AnyFunSuite

/**
 * Release by an outside clock (the query's watermark): only past everything the shard has seen, never Kafka's rule
 * changed.
 */
class StreamTableSequencerReleaseSuite extends AnyFunSuite {

  private final class Joins extends JoinSequence[String, String, String] {
    val out = Seq.newBuilder[(String, Long)]
    def tableWrite(key: String, timestamp: Long, value: String, tableTime: Long): Unit = ()
    def streamRecord(key: String, timestamp: Long, value: String, tableTime: Long): Unit = out += ((value, timestamp))
  }

  private def sequencer = new StreamTableSequencer[String, String, String](
    StreamTableJoinSpec("release", JoinType.Left, graceMs = Some(10), historyRetentionMs = Some(1000))
  )

  test("a time past every record of the shard releases what its grace lets go; the buffer's clock stays Kafka's") {
    val s = sequencer
    val j = new Joins
    s.stream("a", keyIsNull = false, valueIsNull = false, 100, "a100", 1, j)
    s.stream("a", keyIsNull = false, valueIsNull = false, 105, "a105", 1, j)
    s.release(109, j)
    assert(j.out.result() === Nil, "109 - 10 < 100")
    s.release(110, j)
    assert(j.out.result() === Seq(("a100", 100L)), "110 - 10 >= 100, inclusive as Kafka's release")
    assert(s.buffer.get.streamTime === 105L, "the buffer's stream time did not move")
    s.stream("a", keyIsNull = false, valueIsNull = false, 94, "a94", 1, j)
    assert(j.out.result().last === (("a94", 94L)), "late by Kafka's rule (105 - 10 > 94): joined at once")
    s.stream("a", keyIsNull = false, valueIsNull = false, 97, "a97", 1, j)
    assert(j.out.result().last === (("a94", 94L)), "not late by Kafka's rule: buffered, though 110 - 10 > 97")
    s.release(110, j)
    assert(j.out.result().last === (("a97", 97L)), "the next release lets it go")
    assert(s.buffer.get.numRecords === 1, "a105 waits")
  }

  test("a time no later than a record the shard has seen (a dropped one too) releases nothing beyond Kafka's rule") {
    val s = sequencer
    val j = new Joins
    s.stream("a", keyIsNull = false, valueIsNull = false, 100, "a100", 1, j)
    s.stream("a", keyIsNull = false, valueIsNull = true, 200, null, 1, j)
    assert(s.streamSeen === 200L)
    s.release(200, j)
    assert(j.out.result() === Nil, "the watermark came from this shard's dropped record; Kafka still waits")
    s.release(201, j)
    assert(j.out.result() === Seq(("a100", 100L)))
  }
}
