package io.github.sparksuppress.core

import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.core.TestAggregations._

/** Window assignment and close rules, checked against Kafka's definitions (KAFKA_SEMANTICS.md section 2). */
class WindowArithmeticSuite extends AnyFunSuite {

  private def starts(d: TimeWindowDefinition, ts: Long): Seq[Long] =
    Iterator.iterate(d.firstStart(ts))(_ + d.advanceMs).takeWhile(_ <= ts).toList

  test("tumbling windows: one window per record, starts at multiples of the size") {
    val d = TimeWindowDefinition(500, 500, 0)
    assert(starts(d, 0) === Seq(0L))
    assert(starts(d, 499) === Seq(0L))
    assert(starts(d, 500) === Seq(500L))
    assert(starts(d, 1234) === Seq(1000L))
  }

  test("hopping windows: every window containing the record, in start order, never starting below 0") {
    val d = TimeWindowDefinition(10, 5, 0)
    assert(starts(d, 0) === Seq(0L))
    assert(starts(d, 4) === Seq(0L), "[-5,5) would contain 4 but starts are never negative")
    assert(starts(d, 5) === Seq(0L, 5L))
    assert(starts(d, 9) === Seq(0L, 5L))
    assert(starts(d, 10) === Seq(5L, 10L))
    val three = TimeWindowDefinition(10, 3, 0)
    assert(starts(three, 20) === Seq(12L, 15L, 18L))
    for (ts <- 0L to 200L; s <- starts(three, ts)) assert(s <= ts && ts < s + 10 && s % 3 == 0)
  }

  test(
    "close rules: time windows inclusive at end + grace, sliding windows after end + grace, sessions after end " +
      "+ gap + grace"
  ) {
    assert(TimeWindowDefinition(10, 10, 5).closesAt(0, 10) === 15L)
    assert(SlidingWindowDefinition(10, 5).closesAt(0, 10) === 16L)
    assert(SessionWindowDefinition(10, 1).closesAt(0, 0) === 12L)
    assert(
      TimeWindowDefinition(10, 10, Long.MaxValue).closesAt(0, 10) === Long.MaxValue,
      "saturates instead of wrapping"
    )
  }

  test("a time window takes records until end + grace reaches stream time, then drops them, once per window") {
    val agg = new TimeWindowAggregator(
      TimeWindowDefinition(10, 5, 5),
      EmitMode.OnWindowUpdate,
      new StringFold("0"),
      WindowedAggregator.emptyWindows[String](TimeWindowDefinition(10, 5, 5))
    )
    val sink = new Recording[String]
    agg.add("a", 7, 14, sink) // [0,10) closes at 15: still open
    assert(sink.take().map(r => (r._2, r._5)) === Seq((0L, "0+a"), (5L, "0+a")))
    agg.add("b", 8, 15, sink) // now [0,10) is closed: dropped for it, [5,15) takes it
    assert(sink.take().map(r => (r._2, r._5)) === Seq((5L, "0+a+b")))
    assert(agg.metrics.dropped === 1)
  }

  test("onWindowClose emits each time window once, in start order, with the largest record timestamp") {
    val d = TimeWindowDefinition(10, 5, 0)
    val agg = new TimeWindowAggregator(
      d,
      EmitMode.OnWindowClose,
      new StringFold("0"),
      WindowedAggregator.emptyWindows[String](d)
    )
    val sink = new Recording[String]
    agg.add("x", 6, 6, sink)
    agg.add("y", 3, 6, sink)
    assert(sink.take().isEmpty)
    agg.closeDue(9, sink)
    assert(sink.take().isEmpty)
    assert(agg.nextWakeUp === 10L)
    agg.closeDue(15, sink)
    assert(sink.take() === Seq(("result", 0L, 10L, 6L, "0+x+y"), ("result", 5L, 15L, 6L, "0+x")))
    assert(agg.metrics.emittedFinal === 2)
    assert(agg.windows.isEmpty && agg.nextWakeUp === Long.MaxValue)
  }

  test("onWindowUpdate forgets closed windows without emitting") {
    val d = SessionWindowDefinition(10, 0)
    val agg =
      new SessionWindowAggregator(d, EmitMode.OnWindowUpdate, Count, WindowedAggregator.emptyWindows[Counter](d))
    val sink = new Recording[Counter]
    agg.add("a", 0, 0, sink)
    assert(sink.take().size === 1)
    agg.closeDue(10, sink)
    assert(agg.windows.size === 1, "0 + 10 + 0 < 10 is false: still open")
    agg.closeDue(11, sink)
    assert(agg.windows.isEmpty && sink.take().isEmpty && agg.metrics.emittedFinal === 0)
  }
}
