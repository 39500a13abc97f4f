package io.github.sparksuppress.core

/** What a bounded buffer does when a put leaves it over a bound. */
sealed abstract class BufferFullStrategy(val name: String) extends Serializable

object BufferFullStrategy {

  /** Evict (emit) the oldest entries until the buffer is within its bounds again. */
  case object EmitEarly extends BufferFullStrategy("emitEarly")

  /** Fail with [[BufferFullException]]; nothing buffered is emitted early. */
  case object ShutDown extends BufferFullStrategy("shutDown")
}
