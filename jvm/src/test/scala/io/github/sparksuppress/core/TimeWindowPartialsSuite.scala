package io.github.sparksuppress.core

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.core.TestAggregations._

/**
 * Combining one key's records per window before the shuffle must give what Kafka's record-by-record processing
 * gives, drops included, whatever the stream time the state operator starts from.
 */
class TimeWindowPartialsSuite extends AnyFunSuite {

  test("partials applied at the partition's starting stream time equal record-by-record processing") {
    val random = new Random(11)
    for (round <- 1 to 500) {
      val size = (1 + random.nextInt(10)).toLong
      val advance = (1 + random.nextInt(size.toInt)).toLong
      val d = TimeWindowDefinition(size, advance, random.nextInt(6).toLong)
      val startTime = random.nextInt(40).toLong - 1 // the stream time before the partition's records
      val records = Seq.fill(1 + random.nextInt(15))(random.nextInt(50).toLong)

      val direct = new TimeWindowAggregator(d, EmitMode.OnWindowClose, Count, WindowedAggregator.emptyWindows[Counter](d))
      var st = startTime
      records.foreach { ts => st = math.max(st, ts); direct.add("v", ts, st, new Recording[Counter]) }

      val partials = new TimeWindowPartials[Any, Counter](d, Count)
      records.foreach(ts => partials.add("v", ts))
      val combined = new TimeWindowAggregator(d, EmitMode.OnWindowClose, Count, WindowedAggregator.emptyWindows[Counter](d))
      partials.result.foreach(p => combined.addPartial(p.start, p.buffer, p.maxTs, p.records, startTime))

      def view(a: TimeWindowAggregator[Any, Counter]) = a.windows.iterator.map(w => (w.start, w.timestamp, w.buffer.n)).toList
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
}
