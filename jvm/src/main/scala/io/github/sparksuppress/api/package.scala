package io.github.sparksuppress

/**
 * The public Scala API. Two enumerations that executors carry live in the core, beside the engine's other rules; they
 * are re-exported here so that `import io.github.sparksuppress.api._` is all a user needs.
 */
package object api {
  type SuppressionClock = core.SuppressionClock
  val SuppressionClock: core.SuppressionClock.type = core.SuppressionClock

  type EntrySizeModel = core.EntrySizeModel
  val EntrySizeModel: core.EntrySizeModel.type = core.EntrySizeModel
}
