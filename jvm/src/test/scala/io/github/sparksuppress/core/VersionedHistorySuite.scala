package io.github.sparksuppress.core

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/** KIP-889's versioned store rules, per key ([[VersionedHistory]]) and across keys ([[TableStreamTime]]). */
class VersionedHistorySuite extends AnyFunSuite {

  private def history(retention: Long, versions: (Long, String)*): VersionedHistory[String] = {
    val h = new VersionedHistory[String](retention)
    versions.foreach { case (ts, v) => h.put(ts, v) }
    h
  }

  test("get returns the version with the greatest timestamp <= asOf (inclusive), null before the first") {
    val h = history(100, 10L -> "a", 20L -> "b", 30L -> "c")
    assert(Seq(5L, 10L, 19L, 20L, 29L, 30L, 1000L).map(h.get(_, 30)) === Seq(null, "a", "a", "b", "b", "c", "c"))
  }

  test("puts may arrive in any order; a write with an existing timestamp replaces that version") {
    val h = history(100, 30L -> "c", 10L -> "a", 20L -> "b", 20L -> "B")
    assert(h.timestamps === Seq(10L, 20L, 30L))
    assert(h.get(25, 30) === "B")
  }

  test("a tombstone hides the versions before it until a newer version") {
    val h = history(100, 10L -> "a", 20L -> null, 30L -> "c")
    assert(Seq(15L, 20L, 25L, 30L).map(h.get(_, 30)) === Seq("a", null, null, "c"))
  }

  test("an expired lookup (asOf < observed - retention) sees only the latest version, if it is not newer") {
    val h = history(5, 0L -> "a", 10L -> "b")
    assert(h.get(5, 10) === "a", "5 >= 10 - 5: inside the history (boundary inclusive)")
    assert(h.get(4, 10) === null, "expired, and the latest version (10) is newer than 4")
    assert(h.get(12, 20) === "b", "expired, the latest version is old enough")
    val tomb = history(5, 10L -> "b", 20L -> null)
    assert(tomb.get(14, 20) === null, "expired even though b@10 is physically there")
    assert(tomb.get(16, 20) === "b")
    assert(tomb.get(25, 20) === null, "the latest version is a tombstone")
  }

  test("retention 0 keeps only the latest version queryable") {
    val h = history(0, 1L -> "a", 2L -> "b")
    assert(h.get(2, 2) === "b")
    assert(h.get(1, 2) === null)
  }

  test("table stream time refuses writes older than observed - retention (boundary accepted), across keys") {
    val t = new TableStreamTime(5)
    assert(t.time === TableStreamTime.None)
    assert(t.accept(0) && t.accept(10))
    assert(t.accept(5), "5 == 10 - 5 is accepted")
    assert(!t.accept(4) && !t.accept(3))
    assert(t.time === 10)
    assert(t.accept(-100) === false)
  }

  test("pruning never changes what a lookup returns (random writes and lookups against an unpruned history)") {
    val random = new Random(7)
    for (retention <- Seq(0L, 3L, 10L, 50L)) {
      val clock = new TableStreamTime(retention)
      val pruned = new VersionedHistory[String](retention)
      val full = new VersionedHistory[String](retention)
      for (i <- 0 until 3000) {
        val ts = clock.time.max(0L) + random.nextInt(40) - 25
        if (random.nextInt(3) > 0) {
          val value = if (random.nextInt(5) == 0) null else s"v$i"
          if (clock.accept(ts)) {
            pruned.put(ts, value); pruned.prune(clock.time)
            full.put(ts, value)
          }
        } else {
          assert(pruned.get(ts, clock.time) === full.get(ts, clock.time), s"retention $retention, lookup $i at $ts")
        }
      }
      assert(pruned.size < full.size, s"retention $retention: pruning kept ${pruned.size} of ${full.size} versions")
    }
  }
}
