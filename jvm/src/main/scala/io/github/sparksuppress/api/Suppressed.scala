package io.github.sparksuppress.api

import java.time.Duration

import io.github.sparksuppress.core.{BufferTimeRule, SuppressionSpec}

/**
 * What a suppression holds back and for how long, as Kafka's `Suppressed`. Immutable: every `with...` returns a copy.
 * Build one with [[Suppressed.untilTimeLimit]] or [[Suppressed.untilWindowCloses]].
 */
sealed trait Suppressed extends Serializable {
  def name: Option[String]
  def bufferConfig: BufferConfig
  def withName(name: String): Suppressed
}

object Suppressed {

  /**
   * Rate limiting: each key's updates are buffered, and the latest one leaves once the key's buffer time is
   * `timeToWaitForMoreEvents` behind stream time (inclusive), or earlier if an eager buffer is full. With Kafka's
   * default rule the buffer time is that of the key's first buffered update (at most one emission per key per time
   * limit); `withTimerReset()` makes it follow the latest update (a debounce).
   */
  def untilTimeLimit(timeToWaitForMoreEvents: Duration, bufferConfig: BufferConfig): TimeLimit =
    TimeLimit(
      None,
      Durations.millis("timeToWaitForMoreEvents", timeToWaitForMoreEvents),
      checked(bufferConfig),
      BufferTimeRule.First,
      SuppressionClock.EventTime
    )

  /** As [[untilTimeLimit]], measured with `clock` (see [[SuppressionClock.ProcessingTime]]). */
  def untilTimeLimit(
      timeToWaitForMoreEvents: Duration,
      bufferConfig: BufferConfig,
      clock: SuppressionClock
  ): TimeLimit =
    untilTimeLimit(timeToWaitForMoreEvents, bufferConfig).withClock(clock)

  /**
   * Final results: one row per key and window, emitted once `windowEnd + grace <= stream time`; earlier updates and
   * deletions (tombstones) of the window are never emitted. Only strict buffer configs qualify, since an early
   * emission would not be final.
   */
  def untilWindowCloses(bufferConfig: StrictBufferConfig): WindowCloses = WindowCloses(None, checked(bufferConfig))

  private def checked[B <: BufferConfig](b: B): B = {
    if (b == null) throw new IllegalArgumentException("bufferConfig must not be null; use BufferConfig.unbounded().")
    b
  }

  private[api] def checkName(name: String): String = {
    if (name == null || name.trim.isEmpty) {
      throw new IllegalArgumentException(
        s"name must be a non-empty string, got ${if (name == null) "null" else s"'$name'"}."
      )
    }
    name
  }

  final case class TimeLimit private[api] (
      name: Option[String],
      timeLimitMs: Long,
      bufferConfig: BufferConfig,
      bufferTimeRule: BufferTimeRule,
      clock: SuppressionClock
  ) extends Suppressed {
    def withName(name: String): TimeLimit = copy(name = Some(checkName(name)))

    /** Debounce: an update moves the key's buffer time to its own timestamp (the KIP-328 tables' model). */
    def withTimerReset(): TimeLimit = copy(bufferTimeRule = BufferTimeRule.Latest)

    def withClock(clock: SuppressionClock): TimeLimit = {
      if (clock == null) throw new IllegalArgumentException("clock must not be null")
      copy(clock = clock)
    }

    def timeToWaitForMoreEvents: Duration = Duration.ofMillis(timeLimitMs)

    /** The core's rules for this rate limit: tombstones are emitted, since they are updates of the table. */
    private[sparksuppress] def spec(operatorName: String): SuppressionSpec =
      bufferSpec(operatorName, timeLimitMs, bufferConfig, dropTombstones = false, bufferTimeRule)
  }

  final case class WindowCloses private[api] (name: Option[String], bufferConfig: StrictBufferConfig)
      extends Suppressed {
    def withName(name: String): WindowCloses = copy(name = Some(checkName(name)))

    /**
     * The core's rules for final results: an entry's buffer time is its window's end and it leaves `grace` later; a
     * deleted window is never a final result, so tombstones leave without being emitted.
     */
    private[sparksuppress] def spec(operatorName: String, graceMs: Long): SuppressionSpec =
      bufferSpec(operatorName, graceMs, bufferConfig, dropTombstones = true, BufferTimeRule.First)
  }

  /** A spill-to-disk buffer is unbounded here: RocksDB, not this library, keeps it within memory. */
  private def bufferSpec(
      operatorName: String,
      timeLimitMs: Long,
      b: BufferConfig,
      dropTombstones: Boolean,
      rule: BufferTimeRule
  ): SuppressionSpec =
    SuppressionSpec(
      name = operatorName,
      timeLimitMs = timeLimitMs,
      maxRecords = if (b.spillsToDisk) Long.MaxValue else b.maxRecords,
      maxBytes = if (b.spillsToDisk) Long.MaxValue else b.maxBytes,
      whenFull = b.bufferFullStrategy,
      dropTombstones = dropTombstones,
      bufferTimeRule = rule
    )
}
