package io.github.sparksuppress.api

import java.time.Duration

import io.github.sparksuppress.core.WindowDefinition

/**
 * The windows of a windowed aggregation, as Kafka's `TimeWindows`, `SlidingWindows` and `SessionWindows`: immutable,
 * validated when built, `grace` being how long after a window's end late records are still taken.
 */
sealed trait Windows extends Serializable {
  def grace: Duration
  private[sparksuppress] def definition: WindowDefinition
}

/**
 * Tumbling (`advanceBy` = size, the default) or hopping windows `[start, start + size)`, starting at multiples of the
 * advance from the epoch (never before it). A window takes records until `end + grace <= stream time`.
 */
final case class TimeWindows private (sizeMs: Long, advanceMs: Long, graceMs: Long) extends Windows {
  def size: Duration = Duration.ofMillis(sizeMs)
  def advance: Duration = Duration.ofMillis(advanceMs)
  def grace: Duration = Duration.ofMillis(graceMs)

  /** Hopping windows: a new window every `advance` (0 < advance <= size). */
  def advanceBy(advance: Duration): TimeWindows = {
    val ms = Durations.millis("advance", advance, allowZero = false)
    if (ms > sizeMs) {
      throw new IllegalArgumentException(
        s"TimeWindows: advance must be > 0 and <= the window size ($size), got $advance; pass an advance no larger " +
          "than the size (equal to it for tumbling windows)."
      )
    }
    copy(advanceMs = ms)
  }

  private[sparksuppress] def definition = io.github.sparksuppress.core.TimeWindowDefinition(sizeMs, advanceMs, graceMs)
}

object TimeWindows {

  /** Tumbling windows of `size`, taking records until `grace` after their end. */
  def ofSizeAndGrace(size: Duration, grace: Duration): TimeWindows = {
    val s = Durations.millis("TimeWindows size", size, allowZero = false)
    TimeWindows(s, s, Durations.millis("TimeWindows grace", grace))
  }

  /** Tumbling windows of `size` without grace: a window closes at its end. */
  def ofSizeWithNoGrace(size: Duration): TimeWindows = ofSizeAndGrace(size, Duration.ZERO)
}

/**
 * Kafka's sliding windows: a window `[t - timeDifference, t]` (both ends inclusive) ends at every record `t`, and one
 * starts 1 ms after every record followed by others within the time difference; each aggregates the records inside
 * it. A window takes records until `end < stream time - grace`.
 */
final case class SlidingWindows private (timeDifferenceMs: Long, graceMs: Long) extends Windows {
  def timeDifference: Duration = Duration.ofMillis(timeDifferenceMs)
  def grace: Duration = Duration.ofMillis(graceMs)
  private[sparksuppress] def definition =
    io.github.sparksuppress.core.SlidingWindowDefinition(timeDifferenceMs, graceMs)
}

object SlidingWindows {
  def ofTimeDifferenceAndGrace(timeDifference: Duration, grace: Duration): SlidingWindows =
    SlidingWindows(
      Durations.millis("SlidingWindows timeDifference", timeDifference),
      Durations.millis("SlidingWindows grace", grace)
    )

  def ofTimeDifferenceWithNoGrace(timeDifference: Duration): SlidingWindows =
    ofTimeDifferenceAndGrace(timeDifference, Duration.ZERO)
}

/**
 * Session windows: records of a key at most `inactivityGap` apart form one session `[first, last]`. A session takes
 * records until `last + gap + grace < stream time`.
 */
final case class SessionWindows private (inactivityGapMs: Long, graceMs: Long) extends Windows {
  def inactivityGap: Duration = Duration.ofMillis(inactivityGapMs)
  def grace: Duration = Duration.ofMillis(graceMs)
  private[sparksuppress] def definition = io.github.sparksuppress.core.SessionWindowDefinition(inactivityGapMs, graceMs)
}

object SessionWindows {
  def ofInactivityGapAndGrace(inactivityGap: Duration, grace: Duration): SessionWindows =
    SessionWindows(
      Durations.millis("SessionWindows inactivityGap", inactivityGap, allowZero = false),
      Durations.millis("SessionWindows grace", grace)
    )

  def ofInactivityGapWithNoGrace(inactivityGap: Duration): SessionWindows =
    ofInactivityGapAndGrace(inactivityGap, Duration.ZERO)
}
