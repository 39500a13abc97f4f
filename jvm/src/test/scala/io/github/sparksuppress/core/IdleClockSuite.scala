package io.github.sparksuppress.core

import org.scalatest.funsuite.AnyFunSuite

/** The idle clock: when it moves stream time, what counts as progress, what it remembers, and its stored form. */
class IdleClockSuite extends AnyFunSuite {

  test("before the timeout the usual stream time rules; from the timeout on, stream time follows the wall clock") {
    val c = new IdleClock(200)
    assert(c.streamTime(0) === Long.MinValue, "a fresh clock adds nothing")
    assert(c.advance(100, 1000) === 100)
    assert(c.advance(100, 1199) === 100, "199 ms without progress: not idle yet")
    assert(!c.isIdle(1199) && c.isIdle(1200))
    assert(c.advance(100, 1200) === 300, "idle: last stream time + wall time since it moved")
    assert(c.advance(100, 1500) === 600)
  }

  test("progress is stream time beyond the clock's; records below it (out of order) do not end the idle period") {
    val c = new IdleClock(200)
    c.advance(100, 0)
    assert(c.advance(100, 500) === 600)
    assert(!c.observe(400, 500), "behind the idle stream time: not progress")
    assert(c.advance(400, 700) === 800, "the clock runs on")
    assert(c.observe(2000, 700), "beyond it: progress")
    assert(c.lastStreamTime === 2000 && c.lastMovedMs === 700)
    assert(c.advance(900, 800) === 900, "not idle: the usual stream time (the watermark) again")
    assert(c.advance(900, 900) === 2200, "idle again 200 ms after the progress")
  }

  test("stream time never falls below what the clock gave, and the group remembers it until the watermark passes") {
    val c = new IdleClock(200)
    c.advance(100, 0)
    assert(c.advance(100, 300) === 400)
    assert(c.observe(5000, 300), "records arrive again, far ahead")
    assert(c.advance(100, 350) === 400, "continues from the larger: the watermark is behind what was decided at 400")
    assert(c.aheadOf(399) && !c.aheadOf(400))
    assert(c.advance(450, 360) === 450)
  }

  test("observing alone does not raise the mark that must be remembered") {
    val c = new IdleClock(200)
    c.advance(100, 0)
    c.observe(100, 10000)
    assert(c.streamTime(10000) === 10100, "idle")
    assert(!c.aheadOf(100), "nothing was decided at the idle stream time")
  }

  test("runAt advances when the group decides something, and otherwise only observes and runs at the base") {
    val c = new IdleClock(200)
    c.runAt(100, 0, decides = true)
    assert(c.runAt(100, 1000, decides = false) === 100, "nothing to decide: the base")
    assert(!c.aheadOf(100), "and no mark to remember")
    assert(c.runAt(100, 1000, decides = true) === 1100, "something to decide: the idle stream time")
    assert(c.aheadOf(1099))
  }

  test("a wall clock that went back (a restart on another machine) is not idle") {
    val c = new IdleClock(200)
    c.advance(100, 5000)
    assert(c.advance(100, 4000) === 100)
  }

  test("the stored form restores every field; skipping it leaves the reader after it") {
    val c = new IdleClock(200)
    c.advance(100, 0)
    c.advance(100, 300)
    c.observe(1000, 300)
    val out = new ByteWriter(16)
    IdleClock.write(c, out)
    out.writeZigZag(42)
    val r = IdleClock.read(200, new ByteReader(out.toByteArray))
    assert(r.fields === c.fields && r.timeoutMs === 200)
    val in = new ByteReader(out.toByteArray)
    IdleClock.skip(in)
    assert(in.readZigZag() === 42)
  }

  test("the timeout must be positive") {
    intercept[IllegalArgumentException](new IdleClock(0))
  }
}
