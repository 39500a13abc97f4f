package io.github.sparksuppress.core

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/** The sketch against Kafka's definition: lateness of record r = max(0, max(A, max of earlier ts) - ts). */
class LatenessSketchSuite extends AnyFunSuite {

  private def bruteForce(a: Long, records: Seq[Long]): (Long, Long) = {
    var st = a
    var total = 0L
    var max = 0L
    records.foreach { ts =>
      val late = math.max(0L, st - ts)
      total += late
      max = math.max(max, late)
      st = math.max(st, ts)
    }
    (total, max)
  }

  test("exact for every starting stream time while frontier records fit the capacity") {
    val random = new Random(3)
    for (round <- 1 to 300) {
      val records = Seq.fill(1 + random.nextInt(40))(random.nextInt(100).toLong)
      val sketch = new LatenessSketch(64)
      records.foreach(sketch.add)
      assert(sketch.maxTimestamp === records.max, "the largest timestamp, which the map side sends on as its horizon")
      for (a <- Seq(-1L, 0L, 50L, 99L, 150L) ++ records) {
        val r = sketch.evaluate(a)
        assert((r.total, r.max) === bruteForce(a, records), s"round $round, A=$a, records $records")
        assert(r.records === records.size.toLong)
      }
    }
  }

  test("Kafka's vectors: lateness measured before each record advances stream time") {
    val s = new LatenessSketch()
    Seq(200L, 100L, 101L, 102L, 103L, 104L, 105L, 6L).foreach(s.add)
    assert(s.evaluate(-1) === LatenessSketch.Result(8, 779, 194))
  }

  test("beyond its capacity it stays exact for stream times outside the records' range and never overestimates") {
    val random = new Random(5)
    for (round <- 1 to 200) {
      val records = Seq.fill(50 + random.nextInt(200))(random.nextInt(1000).toLong + round)
      val sketch = new LatenessSketch(8)
      records.foreach(sketch.add)
      assert(sketch.entries <= 8)
      for (a <- Seq(-1L, records.head, records.max + 5)) {
        val r = sketch.evaluate(a)
        if (a <= records.head || a > records.max) assert((r.total, r.max) === bruteForce(a, records), s"A=$a")
      }
      val mid = sketch.evaluate(500)
      val (total, max) = bruteForce(500, records)
      assert(mid.total <= total && mid.max <= max)
    }
  }

  test("round-trips through its stored form") {
    val s = new LatenessSketch(4)
    Seq(5L, 9L, 1L, 12L, 30L, 2L, 31L, 40L, 41L).foreach(s.add)
    val out = new ByteWriter()
    s.write(out)
    val back = LatenessSketch.read(new ByteReader(out.toByteArray))
    for (a <- Seq(-1L, 10L, 35L, 100L)) assert(back.evaluate(a) === s.evaluate(a))
  }
}
