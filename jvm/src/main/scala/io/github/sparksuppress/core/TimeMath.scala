package io.github.sparksuppress.core

/** Saturating arithmetic for times in milliseconds, where `Long.MaxValue` durations mean "never". */
object TimeMath {
  def minus(time: Long, duration: Long): Long = {
    val r = time - duration
    // Overflow only when the signs of the operands differ and the result's sign differs from time's.
    if (((time ^ duration) & (time ^ r)) < 0) Long.MinValue else r
  }

  def plus(time: Long, duration: Long): Long = {
    val r = time + duration
    if (((time ^ r) & (duration ^ r)) < 0) (if (duration > 0) Long.MaxValue else Long.MinValue) else r
  }
}
