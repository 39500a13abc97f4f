package io.github.sparksuppress.api

import io.github.sparksuppress.core.EmitMode

/** When a windowed aggregation emits, as Kafka's `EmitStrategy` (KIP-825); chosen per operator. */
final case class EmitStrategy private (private[sparksuppress] val mode: EmitMode) {
  override def toString: String = s"EmitStrategy.${mode.name}()"
}

object EmitStrategy {

  /** One final row per key and window, when the window closes; late records after that are dropped. */
  def onWindowClose(): EmitStrategy = EmitStrategy(EmitMode.OnWindowClose)

  /** A row for every change of a window, as it happens (Kafka's default); sessions also retract merged sessions. */
  def onWindowUpdate(): EmitStrategy = EmitStrategy(EmitMode.OnWindowUpdate)
}
