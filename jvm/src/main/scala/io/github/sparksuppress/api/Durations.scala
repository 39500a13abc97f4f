package io.github.sparksuppress.api

import java.time.Duration

/** Validation of the durations users pass in, with messages that name the parameter and the fix. */
private[sparksuppress] object Durations {
  def millis(parameter: String, d: Duration, allowZero: Boolean = true): Long = {
    if (d == null) throw new IllegalArgumentException(s"$parameter must not be null; pass a java.time.Duration.")
    if (d.isNegative || (!allowZero && d.isZero)) {
      val bound = if (allowZero) ">= 0" else "> 0"
      throw new IllegalArgumentException(s"$parameter must be $bound, got $d; pass a ${if (allowZero) "non-negative" else "positive"} duration.")
    }
    try d.toMillis catch { case _: ArithmeticException => Long.MaxValue }
  }
}
