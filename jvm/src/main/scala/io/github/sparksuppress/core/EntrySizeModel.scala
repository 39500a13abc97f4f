package io.github.sparksuppress.core

/** How a buffered entry's size is counted against `maxBytes`. */
sealed abstract class EntrySizeModel(val name: String) extends Serializable

object EntrySizeModel {

  /**
   * Kafka's estimate (the default): 28 bytes per entry, plus the key's and the value columns' serialized sizes (+8
   * for a windowed key; a tombstone's value counts 0). See the README for the per-type sizes.
   */
  case object Kafka extends EntrySizeModel("kafka")

  /** Only the value columns' serialized sizes count (0 for a tombstone): the model of the KIP-328 tables. */
  case object ValueBytes extends EntrySizeModel("value_bytes")
}
