package io.github.sparksuppress.core

/** What happens to an entry's buffer time when its key is updated while buffered. */
sealed abstract class BufferTimeRule(val name: String) extends Serializable

object BufferTimeRule {

  /**
   * Kafka's shipped rule ("non-resetting"): the entry keeps the buffer time of the key's first insert, so a key that
   * keeps changing is still emitted at most one time limit after its first buffered update.
   */
  case object First extends BufferTimeRule("first")

  /** Debounce: the buffer time follows the latest update, so a key leaves only after it has been quiet. */
  case object Latest extends BufferTimeRule("latest")

  def fromName(name: String): BufferTimeRule = name match {
    case First.name => First
    case Latest.name => Latest
    case other =>
      throw new IllegalArgumentException(s"bufferTime must be 'first' or 'latest', got '$other'")
  }
}
