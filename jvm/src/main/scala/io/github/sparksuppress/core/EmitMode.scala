package io.github.sparksuppress.core

/** When a windowed aggregation emits (Kafka's `EmitStrategy`). */
sealed abstract class EmitMode(val name: String) extends Serializable

object EmitMode {

  /** One final result per key and window, once the window closes. */
  case object OnWindowClose extends EmitMode("onWindowClose")

  /** A result for every change of a window (and, for sessions, a retraction for every session a merge removes). */
  case object OnWindowUpdate extends EmitMode("onWindowUpdate")
}
