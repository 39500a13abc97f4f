package io.github.sparksuppress.core

/**
 * Stream time for a quiet input (beyond Kafka): Bytewax's event clock, switched on after a timeout. Kafka's stream
 * time moves only with records, so when the input stops, the last windows never close and buffers never empty. With
 * this clock, once the stream time a group observes (the watermark, or the group's own records) has not moved for
 * `timeoutMs` of wall-clock time, stream time runs on with the wall clock from where it stood:
 * `last + (now - movedAt)`. Whatever observed stream time overtakes that becomes the new `last` (the idle period
 * ends); observed times below it are not progress (out-of-order records, a watermark that lags behind).
 *
 * Wall time is whatever the caller passes (the micro-batch's timestamp), never read here, so replays of the same
 * calls give the same stream times. One clock per group of an operator; its fields go into the group's state.
 *
 * @param timeoutMs
 *   how long observed stream time must stand still before the clock moves it (> 0)
 */
final class IdleClock(val timeoutMs: Long) {
  require(timeoutMs > 0, s"idle timeout must be positive, got $timeoutMs ms")

  private var last = Long.MinValue
  private var movedAtMs = Long.MinValue
  // The largest stream time this clock gave beyond the watermark: decisions (closed windows, emitted records) were
  // taken at it, so the group must never run at a smaller one, and must remember it until the watermark passes it.
  private var reached = Long.MinValue

  /** The largest stream time observed so far (Long.MinValue: none). */
  def lastStreamTime: Long = last

  /** The wall-clock time at which the observed stream time last moved. */
  def lastMovedMs: Long = movedAtMs

  /** True once observed stream time has stood still for the timeout (a wall clock that went back is not idle). */
  def isIdle(nowMs: Long): Boolean = last != Long.MinValue && nowMs - movedAtMs >= timeoutMs

  /** The stream time this clock gives at `nowMs` on its own: Long.MinValue when it adds nothing. */
  def streamTime(nowMs: Long): Long =
    math.max(reached, if (isIdle(nowMs)) TimeMath.plus(last, nowMs - movedAtMs) else Long.MinValue)

  /** Records that observed stream time is `streamTime` at `nowMs`; true if that is progress (it ends idleness). */
  def observe(streamTime: Long, nowMs: Long): Boolean = {
    val moved = streamTime > math.max(last, this.streamTime(nowMs))
    if (moved) { last = streamTime; movedAtMs = nowMs }
    moved
  }

  /**
   * The stream time to run at, when the usual one (the watermark) is `base`: the larger of `base` and this clock's,
   * after observing `base`. Call it only when the result decides something (the group holds or receives records): it
   * raises the mark that the group must not fall below, and must remember until the watermark passes it.
   */
  def advance(base: Long, nowMs: Long): Long = {
    observe(base, nowMs)
    val own = streamTime(nowMs)
    if (own > base) { reached = own; own }
    else base
  }

  /**
   * The stream time a group runs at when the usual one is `base`: [[advance]] when the result `decides` something
   * (the group holds or receives records); otherwise `base`, only observed, so that no mark is raised which the group
   * would have to remember.
   */
  def runAt(base: Long, nowMs: Long, decides: Boolean): Long =
    if (decides) advance(base, nowMs) else { observe(base, nowMs); base }

  /** True while the group has run ahead of `watermark`: its state (if only this clock) must be kept. */
  def aheadOf(watermark: Long): Boolean = reached > watermark

  /** The stored fields, to tell whether anything changed. */
  def fields: (Long, Long, Long) = (last, movedAtMs, reached)

  override def toString: String = s"IdleClock(timeout=$timeoutMs, last=$last, movedAt=$movedAtMs, reached=$reached)"
}

object IdleClock {

  /** Appends the clock's fields (the timeout is configuration, not state). */
  def write(clock: IdleClock, out: ByteWriter): Unit = {
    out.writeZigZag(clock.last)
    out.writeZigZag(clock.movedAtMs)
    out.writeZigZag(clock.reached)
  }

  /** A clock with `timeoutMs` and the fields [[write]] stored. */
  def read(timeoutMs: Long, in: ByteReader): IdleClock = {
    val c = new IdleClock(timeoutMs)
    c.last = in.readZigZag()
    c.movedAtMs = in.readZigZag()
    c.reached = in.readZigZag()
    c
  }

  /** Skips the fields [[write]] stored (state written with the option on, read with it off). */
  def skip(in: ByteReader): Unit = { in.readZigZag(); in.readZigZag(); in.readZigZag() }

  /**
   * The clock of state that may or may not hold one (`stored`), for an operator whose option is `timeoutMs`:
   * restored, fresh (the option was switched on since), or skipped (switched off: None).
   */
  def readStored(stored: Boolean, timeoutMs: Option[Long], in: ByteReader): Option[IdleClock] = timeoutMs match {
    case Some(t) => Some(if (stored) read(t, in) else new IdleClock(t))
    case None => if (stored) skip(in); None
  }
}
