package io.github.sparksuppress.core

/** Which time a time limit is measured in. */
sealed abstract class SuppressionClock(val name: String) extends Serializable

object SuppressionClock {

  /** Event time, as Kafka: the record timestamps and the watermark. Deterministic and replayable. */
  case object EventTime extends SuppressionClock("event")

  /**
   * Wall-clock time of the micro-batches (Kafka never shipped this). Rate limiting then holds in real time even when
   * event time stands still, but results depend on when batches run: not deterministic, not replayable.
   */
  case object ProcessingTime extends SuppressionClock("processing")
}
