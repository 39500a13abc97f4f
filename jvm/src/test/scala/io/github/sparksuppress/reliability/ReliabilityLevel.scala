package io.github.sparksuppress.reliability

/**
 * How much the reliability checks do. `make test` runs the quick level (a representative slice, a few minutes);
 * `make reliability` sets RELIABILITY=1 (every operator under test, longer streams, 1M keys); RELIABILITY_LONG=1 adds
 * the soak run (RELIABILITY_SOAK_SECONDS, default 600).
 */
object ReliabilityLevel {
  private def flag(name: String): Boolean = sys.env.get(name).exists(v => v.nonEmpty && v != "0")

  val full: Boolean = flag("RELIABILITY") || flag("RELIABILITY_LONG")
  val long: Boolean = flag("RELIABILITY_LONG")

  def pick[T](quick: T, whenFull: T): T = if (full) whenFull else quick

  def soakSeconds: Int = sys.env.get("RELIABILITY_SOAK_SECONDS").map(_.toInt).getOrElse(600)
}
