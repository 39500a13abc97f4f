package io.github.sparksuppress.core

import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.core.TestAggregations._

/** Session merging as Kafka's KStreamSessionWindowAggregate does it, without Spark. */
class SessionWindowAggregatorSuite extends AnyFunSuite {

  private def aggregator(gap: Long, grace: Long, mode: EmitMode = EmitMode.OnWindowUpdate) = {
    val d = SessionWindowDefinition(gap, grace)
    new SessionWindowAggregator(d, mode, new StringFold("0"), WindowedAggregator.emptyWindows[String](d))
  }

  /** Applies records with Kafka's stream time (the largest timestamp so far, starting at -1). */
  private def feed(
      agg: SessionWindowAggregator[String, String],
      sink: Recording[String],
      records: (String, Long)*
  ): Unit = {
    var st = -1L
    records.foreach { case (v, ts) =>
      st = math.max(st, ts)
      agg.closeDue(st, sink)
      agg.add(v, ts, st, sink)
    }
  }

  test("records exactly gap apart share a session; gap + 1 apart they do not (inclusive merge bounds)") {
    val a = aggregator(10, 100)
    val sink = new Recording[String]
    feed(a, sink, "1" -> 0, "2" -> 10, "3" -> 21)
    assert(a.windows.iterator.map(w => (w.start, w.end)).toList === List((0L, 10L), (21L, 21L)))
  }

  test("a merge folds the merged sessions into the initializer in store order, then adds the record") {
    val a = aggregator(500, 0)
    val sink = new Recording[String]
    feed(a, sink, "1" -> 10, "2" -> 15)
    assert(sink.take() === Seq(
      ("result", 10L, 10L, 10L, "0+1"),
      ("retraction", 10L, 10L, 10L, "0+1"),
      ("result", 10L, 15L, 15L, "0+0+1+2")
    ))
  }

  test("a record bridging two sessions retracts both, ordered by end, then emits the merged session") {
    val a = aggregator(15, 100)
    val sink = new Recording[String]
    feed(a, sink, "a" -> 0, "b" -> 30, "c" -> 15)
    assert(sink.take().drop(2) === Seq(
      ("retraction", 0L, 0L, 0L, "0+a"),
      ("retraction", 30L, 30L, 30L, "0+b"),
      ("result", 0L, 30L, 30L, "0+0+a+0+b+c")
    ))
    assert(a.windows.size === 1)
  }

  test("a record equal to a single-point session updates it in place, without a retraction") {
    val a = aggregator(10, 0)
    val sink = new Recording[String]
    feed(a, sink, "x" -> 5, "y" -> 5)
    assert(sink.take() === Seq(("result", 5L, 5L, 5L, "0+x"), ("result", 5L, 5L, 5L, "0+0+x+y")))
  }

  test("a late record is kept if it merges into an open session, dropped if its session would be closed") {
    val a = aggregator(10, 0)
    val sink = new Recording[String]
    feed(a, sink, "s" -> 25, "t" -> 35)
    sink.take()
    // Another key moved stream time to 45: [25,35] stays open (35 + 10 + 0 < 45 is false), its close time is 35.
    a.closeDue(45, sink)
    a.add("late", 28, 45, sink) // older than the close time, but it merges with the open [25,35]
    assert(sink.take().last === (("result", 25L, 35L, 35L, "0+0+0+s+t+late")))
    // A fresh session at 5 would end at 5 < 45 - 10 - 0: dropped and counted.
    a.add("gone", 5, 45, sink)
    assert(a.metrics.dropped === 1 && sink.take().isEmpty)
  }

  test("sessions close strictly after end + gap + grace and are emitted once, by end then start") {
    val a = aggregator(10, 1, EmitMode.OnWindowClose)
    val sink = new Recording[String]
    feed(a, sink, "p" -> 0, "q" -> 2)
    a.closeDue(13, sink)
    assert(sink.take().isEmpty, "2 + 10 + 1 < 13 is false")
    assert(a.nextWakeUp === 14L)
    a.closeDue(14, sink)
    assert(sink.take() === Seq(("result", 0L, 2L, 2L, "0+0+p+q")))
    a.closeDue(100, sink)
    assert(sink.take().isEmpty && a.metrics.emittedFinal === 1)
  }
}
