package io.github.sparksuppress.spark.common

import java.time.{Instant, LocalDateTime, ZoneOffset}

/**
 * Event times as the adapters see them: Spark hands out `java.sql.Timestamp` or `java.time.Instant` (or
 * `LocalDateTime` for TIMESTAMP_NTZ, read as UTC); the core works in epoch milliseconds, floored.
 */
private[sparksuppress] object SparkTime {
  def micros(v: Any): Long = v match {
    case t: java.sql.Timestamp =>
      Math.addExact(Math.multiplyExact(Math.floorDiv(t.getTime, 1000L), 1000000L), (t.getNanos / 1000).toLong)
    case i: Instant => Math.addExact(Math.multiplyExact(i.getEpochSecond, 1000000L), (i.getNano / 1000).toLong)
    case l: LocalDateTime => micros(l.toInstant(ZoneOffset.UTC))
  }

  /** Epoch milliseconds as a row carries them: a `Timestamp`, or for TIMESTAMP_NTZ a `LocalDateTime` read as UTC. */
  def external(ms: Long, ntz: Boolean): Any =
    if (ntz) LocalDateTime.ofInstant(Instant.ofEpochMilli(ms), ZoneOffset.UTC) else new java.sql.Timestamp(ms)

  def millis(v: Any): Long = v match {
    case t: java.sql.Timestamp => t.getTime
    case other => Math.floorDiv(micros(other), 1000L)
  }
}
