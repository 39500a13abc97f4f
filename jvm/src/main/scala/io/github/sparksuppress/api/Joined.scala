package io.github.sparksuppress.api

import java.time.Duration

import io.github.sparksuppress.core.JoinType

/**
 * How a stream is joined with a table, as Kafka's `Joined`: inner or left, an optional grace period for the stream
 * side, and an optional operator name (metrics, errors). Immutable: every `with...` returns a copy.
 */
final case class Joined private (
    joinType: JoinType,
    gracePeriod: Option[Duration],
    name: Option[String],
    watermarkRelease: Boolean = true,
    idleTimeout: Option[Duration] = None
) {

  /**
   * Stream records wait up to `gracePeriod` (in stream time) for out-of-order table updates, then join with the table
   * version valid at their own timestamp. Needs a versioned table whose history retention is at least as long. With
   * `Duration.ZERO` nothing waits; records older than the stream time are counted as late.
   */
  def withGracePeriod(gracePeriod: Duration): Joined = {
    Durations.millis("gracePeriod", gracePeriod)
    copy(gracePeriod = Some(gracePeriod))
  }

  /**
   * Kafka's timing only: records waiting in the grace buffer leave only with later stream records of their shard. By
   * default (beyond Kafka) a waiting record also leaves once the stream's watermark has passed its timestamp + grace
   * and every stream record its shard has seen, so a shard that gets no more stream records does not keep its
   * records; where Kafka would emit, its timing is the same either way (docs/join.md, "Release on watermark").
   */
  def withoutWatermarkRelease(): Joined = copy(watermarkRelease = false)

  /**
   * Idle progress (beyond Kafka; needs a grace period, the release on the watermark and a watermarked stream): once a
   * shard's stream time (the watermark, or its own stream records) has not moved for `idleTimeout` of wall-clock
   * time, the grace buffer's release time runs on with the wall clock, so waiting records leave although no record
   * arrives. Not deterministic, and needs a processing-time trigger: see docs/join.md, "Idle progress".
   */
  def withIdleTimeout(idleTimeout: Duration): Joined = {
    Durations.idleTimeout(idleTimeout)
    copy(idleTimeout = Some(idleTimeout))
  }

  /** Names the operator: its metrics are reported under this name, and its state is checked against it. */
  def withName(name: String): Joined = copy(name = Some(Suppressed.checkName(name)))
}

object Joined {

  /** Emits a stream record only when the table has a value for its key (Kafka's `join`). */
  def inner(): Joined = Joined(JoinType.Inner, None, None)

  /** Emits every stream record, with null table columns when the table has no value (Kafka's `leftJoin`). */
  def left(): Joined = Joined(JoinType.Left, None, None)
}
