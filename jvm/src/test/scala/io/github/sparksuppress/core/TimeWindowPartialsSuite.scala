package io.github.sparksuppress.core

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.core.TestAggregations._

/**
 * Combining one key's records per window before the shuffle must give what Kafka's record-by-record processing gives,
 * drops included, whatever the stream time the state operator starts from.
 */
class TimeWindowPartialsSuite extends AnyFunSuite {

  /** Random windows; with `sliced`, hopping windows whose advance divides their size (combined per slice). */
  private def randomWindows(random: Random, sliced: Boolean): TimeWindowDefinition =
    if (!sliced) {
      val size = (1 + random.nextInt(10)).toLong
      TimeWindowDefinition(size, (1 + random.nextInt(size.toInt)).toLong, random.nextInt(6).toLong)
    } else {
      val advance = (1 + random.nextInt(4)).toLong
      TimeWindowDefinition(advance * (2 + random.nextInt(5)), advance, random.nextInt(6).toLong)
    }

  for (sliced <- Seq(false, true)) test(
    s"partials applied at the partition's starting stream time equal record-by-record processing (sliced: $sliced)"
  ) {
    val random = new Random(11)
    for (round <- 1 to 500) {
      val d = randomWindows(random, sliced)
      assert(TimeWindowPartials.slices(d) || !sliced)
      val startTime = random.nextInt(40).toLong - 1 // the stream time before the partition's records
      val records = Seq.fill(1 + random.nextInt(15))(random.nextInt(50).toLong)

      val direct =
        new TimeWindowAggregator(d, EmitMode.OnWindowClose, Count, WindowedAggregator.emptyWindows[Counter](d))
      var st = startTime
      records.foreach { ts => st = math.max(st, ts); direct.add("v", ts, st, new Recording[Counter]) }

      val partials = new TimeWindowPartials[Any, Counter](d, Count)
      records.foreach(ts => partials.add("v", ts))
      val combined =
        new TimeWindowAggregator(d, EmitMode.OnWindowClose, Count, WindowedAggregator.emptyWindows[Counter](d))
      partials.result.foreach(p => combined.addPartial(p.start, p.slice, p.buffer, p.maxTs, p.records, startTime))

      def view(a: TimeWindowAggregator[Any, Counter]) =
        a.windows.iterator.map(w => (w.start, w.timestamp, w.buffer.n)).toList
      assert(view(combined) === view(direct), s"round $round: $d from $startTime, records $records")
      assert(combined.metrics.dropped + partials.dropped === direct.metrics.dropped, s"round $round")
      assert(partials.maxTs === records.max)
    }
  }

  test("a window keeps the prefix of its records that arrived before the key's time passed its end + grace") {
    val d = TimeWindowDefinition(10, 10, 0)
    val p = new TimeWindowPartials[Any, Counter](d, Count)
    Seq(3L, 25L, 4L, 5L).foreach(ts => p.add("v", ts))
    assert(p.result.map(w => (w.start, w.records, w.maxTs)) === Seq((0L, 1L, 3L), (20L, 1L, 25L)))
    assert(p.dropped === 2)
  }

  test("hopping windows whose advance divides their size combine per slice; a record some window refuses, per window") {
    val d = TimeWindowDefinition(10, 2, 0) // five windows per record
    val p = new TimeWindowPartials[Any, Counter](d, Count)
    Seq(13L, 12L, 15L, 25L, 21L).foreach(ts => p.add("v", ts))
    // 21 comes after 25: windows [12,22) and [14,24) are closed at 25, [16,26) .. [20,30) are not, so 21 is
    // dropped twice and combined into those three windows, not into its slice.
    assert(p.result.map(w => (w.start, w.slice, w.records, w.maxTs)) === Seq(
      (12L, true, 2L, 13L),
      (14L, true, 1L, 15L),
      (16L, false, 1L, 21L),
      (18L, false, 1L, 21L),
      (20L, false, 1L, 21L),
      (24L, true, 1L, 25L)
    ))
    assert(p.dropped === 2)
  }

  test("a slice reaches every window containing it, each with a buffer of its own") {
    val d = TimeWindowDefinition(6, 2, 0)
    val p = new TimeWindowPartials[Any, Counter](d, Count)
    Seq(8L, 9L).foreach(ts => p.add("v", ts))
    val a = new TimeWindowAggregator(d, EmitMode.OnWindowClose, Count, WindowedAggregator.emptyWindows[Counter](d))
    p.result.foreach(s => a.addPartial(s.start, s.slice, s.buffer, s.maxTs, s.records, 0L))
    assert(a.windows.iterator.map(w => (w.start, w.buffer.n)).toList === List((4L, 2L), (6L, 2L), (8L, 2L)))
    val buffers = a.windows.iterator.map(_.buffer).toList
    assert(buffers.distinct.size === 3) // reference-distinct: merging into one must not change another
  }
}
