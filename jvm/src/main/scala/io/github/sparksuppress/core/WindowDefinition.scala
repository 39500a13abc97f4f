package io.github.sparksuppress.core

/**
 * Kafka's window kinds as plain numbers (milliseconds), with their window arithmetic and close rules. The public API
 * validates user input with clear messages; here invalid values are programming errors.
 *
 * Every kind answers one question the emit logic needs: the stream time at which a window is closed ([[closesAt]]). A
 * closed window takes no more records and, under `onWindowClose`, is emitted.
 */
sealed trait WindowDefinition extends Serializable {
  def graceMs: Long

  /** The smallest stream time at which the window with these bounds (Kafka's own bounds) is closed. */
  def closesAt(start: Long, end: Long): Long
}

/**
 * Tumbling (`advance == size`) and hopping windows: `[start, start + size)`, starts at multiples of `advance`, never
 * negative. A window is closed once `end + grace <= stream time` (inclusive, as Kafka's code; its javadoc says
 * "larger than").
 */
final case class TimeWindowDefinition(sizeMs: Long, advanceMs: Long, graceMs: Long) extends WindowDefinition {
  require(sizeMs > 0 && advanceMs > 0 && advanceMs <= sizeMs && graceMs >= 0, s"invalid time windows $this")

  /** Start of the earliest window containing `ts` (`ts >= 0`): later ones follow every `advance` up to `ts`. */
  def firstStart(ts: Long): Long = (math.max(0L, ts - sizeMs + advanceMs) / advanceMs) * advanceMs

  def endOf(start: Long): Long = TimeMath.plus(start, sizeMs)

  def closesAt(start: Long, end: Long): Long = TimeMath.plus(end, graceMs)
}

/**
 * Kafka's sliding windows: `[start, start + timeDifference]` with BOTH bounds inclusive, created around records (a
 * record's left window ends at it; its right window starts 1 ms after it). Closed once `end < stream time - grace`,
 * i.e. at `end + grace + 1`.
 */
final case class SlidingWindowDefinition(timeDifferenceMs: Long, graceMs: Long) extends WindowDefinition {
  require(timeDifferenceMs >= 0 && graceMs >= 0, s"invalid sliding windows $this")

  def closesAt(start: Long, end: Long): Long = TimeMath.plus(TimeMath.plus(end, graceMs), 1L)
}

/**
 * Session windows: `[first record, last record]` (Kafka's bounds, end INCLUSIVE); records at most `gap` apart belong
 * to one session. A session is closed once `end + gap + grace < stream time` (strict).
 */
final case class SessionWindowDefinition(gapMs: Long, graceMs: Long) extends WindowDefinition {
  require(gapMs > 0 && graceMs >= 0, s"invalid session windows $this")

  def closesAt(start: Long, end: Long): Long = TimeMath.plus(TimeMath.plus(TimeMath.plus(end, gapMs), graceMs), 1L)
}
