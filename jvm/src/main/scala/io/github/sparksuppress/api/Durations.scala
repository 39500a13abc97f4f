package io.github.sparksuppress.api

import java.time.Duration

/** Validation of the durations users pass in, with messages that name the parameter and the fix. */
private[sparksuppress] object Durations {
  def millis(parameter: String, d: Duration, allowZero: Boolean = true): Long = {
    if (d == null) throw new IllegalArgumentException(s"$parameter must not be null; pass a java.time.Duration.")
    if (d.isNegative || (!allowZero && d.isZero)) {
      val bound = if (allowZero) ">= 0" else "> 0"
      throw new IllegalArgumentException(
        s"$parameter must be $bound, got $d; pass a ${if (allowZero) "non-negative" else "positive"} duration."
      )
    }
    try d.toMillis
    catch { case _: ArithmeticException => Long.MaxValue }
  }

  /**
   * An idle timeout (beyond Kafka): how long stream time must stand still before it runs on with the wall clock.
   * Positive, and at least a millisecond, the unit stream time moves in.
   */
  def idleTimeout(d: Duration): Long = {
    val ms = millis("idleTimeout", d, allowZero = false)
    if (ms == 0)
      throw new IllegalArgumentException(s"idleTimeout must be at least 1 millisecond, got $d; pass a longer duration.")
    ms
  }
}
