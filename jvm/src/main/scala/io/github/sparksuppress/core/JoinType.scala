package io.github.sparksuppress.core

/** Which stream records a stream-table join drops and which it emits, as Kafka's `join` and `leftJoin`. */
sealed abstract class JoinType(val name: String) extends Serializable {

  /** Kafka drops a stream record before anything else when this holds; it is never buffered nor joined. */
  def drops(keyIsNull: Boolean, valueIsNull: Boolean): Boolean

  /** Whether a joined stream record is emitted when the table has no value for it (none, or a tombstone). */
  def emitsWithoutTableValue: Boolean
}

object JoinType {

  /** `stream.join(table)`: records with a null key or value are dropped; only matches are emitted. */
  case object Inner extends JoinType("inner") {
    def drops(keyIsNull: Boolean, valueIsNull: Boolean): Boolean = keyIsNull || valueIsNull
    def emitsWithoutTableValue: Boolean = false
  }

  /** `stream.leftJoin(table)`: records with a null value are dropped; a null key joins with no table value. */
  case object Left extends JoinType("left") {
    def drops(keyIsNull: Boolean, valueIsNull: Boolean): Boolean = valueIsNull
    def emitsWithoutTableValue: Boolean = true
  }

  def fromName(name: String): JoinType = name match {
    case Inner.name => Inner
    case Left.name => Left
    case other => throw new IllegalArgumentException(s"how must be 'inner' or 'left', got '$other'")
  }
}
