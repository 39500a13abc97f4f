package io.github.sparksuppress.core

/** Receives what a windowed aggregation emits for one key, in Kafka's order. Bounds are Kafka's. */
trait WindowSink[-B] {

  /** A window's aggregate: an update (onWindowUpdate) or its final result (onWindowClose). */
  def result(start: Long, end: Long, timestamp: Long, buffer: B): Unit

  /** A session that a merge removed (onWindowUpdate only): its earlier result no longer holds. */
  def retraction(start: Long, end: Long, timestamp: Long, buffer: B): Unit

  /** True if the sink takes [[late]] records; else the aggregator only counts them, as Kafka does. */
  def takesLate: Boolean = false

  /**
   * A record dropped because the window `[start, end]` it belongs to had closed: `buffer` aggregates that record
   * alone, `timestamp` is its own. Called once per record and closed window, exactly where Kafka counts a drop.
   */
  def late(start: Long, end: Long, timestamp: Long, buffer: B): Unit = ()
}
