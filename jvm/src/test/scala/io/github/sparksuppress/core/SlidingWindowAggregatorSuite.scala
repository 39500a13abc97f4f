package io.github.sparksuppress.core

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.core.TestAggregations._

/**
 * Kafka's sliding windows, checked against their definition: every window `[s, s + d]` aggregates exactly the records
 * inside it; each record has its left window (`[ts - d, ts]`, or the shared `[0, d]` for records before `d`) and,
 * when a later record falls within `d` after it, its right window `[ts + 1, ts + 1 + d]`.
 */
class SlidingWindowAggregatorSuite extends AnyFunSuite {

  private def aggregator(d: Long, grace: Long, mode: EmitMode = EmitMode.OnWindowUpdate) = {
    val definition = SlidingWindowDefinition(d, grace)
    new SlidingWindowAggregator(definition, mode, Count, WindowedAggregator.emptyWindows[Counter](definition))
  }

  private def checkDefinition(d: Long, records: Seq[Long], agg: SlidingWindowAggregator[Any, Counter]): Unit = {
    val windows = agg.windows.iterator.map(w => w.start -> w).toMap
    windows.values.foreach { w =>
      val inside = records.count(t => t >= w.start && t <= w.end)
      assert(w.buffer.n === inside.toLong, s"window [${w.start},${w.end}] of $records")
      assert(w.timestamp === records.filter(t => t >= w.start && t <= w.end).max, s"timestamp of $w in $records")
    }
    records.foreach { t =>
      val left = if (t < d) 0L else t - d
      assert(windows.contains(left), s"left window of $t in $records: ${agg.windows}")
      if (records.exists(u => u > t && u <= t + 1 + d))
        assert(windows.contains(t + 1), s"right window of $t in $records")
    }
  }

  test("in-order and out-of-order records build exactly Kafka's windows with exact aggregates") {
    val random = new Random(7)
    for (round <- 1 to 400) {
      val d = (1 + random.nextInt(12)).toLong
      val records = Seq.fill(1 + random.nextInt(12))(random.nextInt(60).toLong)
      val agg = aggregator(d, 1000)
      val sink = new Recording[Counter]
      var st = -1L
      records.foreach { ts =>
        st = math.max(st, ts)
        agg.closeDue(st, sink)
        agg.add("v", ts, st, sink)
      }
      checkDefinition(d, records, agg)
      assert(agg.metrics.dropped === 0, s"round $round")
    }
  }

  test("a record creates its left window from the previous record's, and the previous record's right window") {
    val agg = aggregator(10, 100)
    val sink = new Recording[Counter]
    agg.add("a", 10, 10, sink)
    assert(sink.take().map(r => (r._2, r._3, r._5)) === Seq((0L, 10L, "1")))
    agg.add("b", 15, 15, sink)
    // previous record's right window [11,21] gets b; b's left window [5,15] copies [0,10] (which holds a) + b.
    assert(sink.take().map(r => (r._2, r._3, r._5)) === Seq((11L, 21L, "1"), (5L, 15L, "2")))
    // Out of order: updates [11,21] then [5,15] (Kafka's stores are read latest start first), then creates [2,12]
    // from [0,10] and its right window from [11,21] as it was before c.
    agg.add("c", 12, 15, sink)
    val out = sink.take().map(r => (r._2, r._3, r._5))
    assert(out === Seq((11L, 21L, "2"), (5L, 15L, "3"), (2L, 12L, "2"), (13L, 23L, "1")))
  }

  test("updates leave latest start first, the left window last, then the windows the record creates") {
    val agg = aggregator(10, 0)
    val sink = new Recording[Counter]
    Seq(100L, 105L, 108L).foreach(t => agg.add("x", t, t, sink))
    sink.take()
    // [106,116] holds 108, [101,111] (111's left window) holds 105 and 108; 108's window [98,108] ends first.
    agg.add("y", 111, 111, sink)
    assert(sink.take().map(r => (r._2, r._3, r._4, r._5)) ===
      Seq((106L, 116L, 111L, "2"), (101L, 111L, 111L, "3"), (109L, 119L, 111L, "1")))
  }

  test("a record at the same time as its left window's latest creates nothing more") {
    val agg = aggregator(10, 100)
    val sink = new Recording[Counter]
    agg.add("x", 100, 100, sink)
    agg.add("y", 103, 103, sink)
    sink.take()
    agg.add("z", 103, 103, sink)
    // z's left window [93,103] already holds y, also at 103: y made every window z needs, so Kafka stops there.
    assert(sink.take().map(r => (r._2, r._3, r._5)) === Seq((101L, 111L, "2"), (93L, 103L, "3")))
    assert(agg.windows.iterator.map(w => (w.start, w.buffer.n)).toList === List((90L, 1L), (93L, 3L), (101L, 2L)))
  }

  test("a record whose windows are all closed is dropped once; closed windows it would update count too") {
    val agg = aggregator(10, 0, EmitMode.OnWindowClose)
    val sink = new Recording[Counter]
    agg.add("a", 100, 100, sink)
    agg.closeDue(200, sink)
    assert(sink.take().map(r => (r._2, r._3, r._5)) === Seq((90L, 100L, "1")))
    agg.add("late", 50, 200, sink) // 50 + 10 < 200: every window of it is closed
    assert(agg.metrics.dropped === 1)
    val b = aggregator(10, 0)
    b.add("x", 20, 20, new Recording[Counter])
    b.add("y", 25, 31, new Recording[Counter]) // its left window [15,25] is closed (25 < 31); [21,31] is not
    assert(b.metrics.dropped === 1)
  }

  test("closed windows are emitted once, by start, kept while a record could read them, then forgotten") {
    val agg = aggregator(10, 0, EmitMode.OnWindowClose)
    val sink = new Recording[Counter]
    agg.add("a", 10, 10, sink)
    agg.add("b", 15, 15, sink)
    agg.closeDue(20, sink)
    assert(sink.take().map(r => (r._2, r._3, r._5)) === Seq((0L, 10L, "1"), (5L, 15L, "2")))
    assert(agg.windows.iterator.count(_.closed) === 2, "still readable by later records")
    assert(agg.nextWakeUp === 22L, "the open window [11,21] closes at 22")
    agg.closeDue(22, sink)
    assert(sink.take().map(r => (r._2, r._3, r._5)) === Seq((11L, 21L, "1")))
    assert(agg.nextWakeUp === 31L, "then [0,10] can be forgotten once 0 < st - 0 - 30")
    agg.closeDue(60, sink)
    assert(agg.windows.isEmpty && sink.take().isEmpty && agg.metrics.emittedFinal === 3)
  }
}
