package io.github.sparksuppress.spark.common

import java.nio.charset.StandardCharsets

import scala.util.control.NonFatal

import io.github.sparksuppress.core.{ByteReader, ByteWriter}

/**
 * The start of every stored state value: a format byte (so a later version can refuse or migrate old state with a
 * clear message) and the operator's name (so that state found at an operator's position in the checkpoint is known to
 * be its own: Spark locates state by position, not by name).
 */
private[spark] object StateHeader {

  def write(out: ByteWriter, format: Int, name: Option[String]): Unit = {
    out.writeByte(format)
    out.writeBytes(name.map(_.getBytes(StandardCharsets.UTF_8)).getOrElse(Array.emptyByteArray))
  }

  /** Reads and checks a header; `what` names the state in errors. */
  def read(in: ByteReader, format: Int, name: Option[String], operator: String, what: String): Unit =
    readAny(in, Seq(format), name, operator, what)

  /** As [[read]], for state that may have any of `formats` (an option extends it); returns the stored one. */
  def readAny(in: ByteReader, formats: Seq[Int], name: Option[String], operator: String, what: String): Int = {
    val stored = requireFormat(in.readByte(), formats, operator, what)
    requireOwnName(new String(in.readBytes(), StandardCharsets.UTF_8), name, operator)
    stored
  }

  /** Refuses a stored format byte this version does not read; returns it. */
  def requireFormat(stored: Int, formats: Seq[Int], operator: String, what: String): Int = {
    if (!formats.exists(_ == stored)) { // not contains: it compares boxed, on every key's state it reads
      val readable = if (formats.length == 1) formats.head.toString
      else formats.init.mkString(", ") + " or " + formats.last
      throw new IllegalStateException(
        s"$operator: the stored $what has format $stored, but this spark-suppress version reads format $readable. " +
          "Restart with the spark-suppress version that wrote the checkpoint, or start from a new checkpoint."
      )
    }
    stored
  }

  /** Refuses state stored under another name (empty: stored unnamed) than the operator's own (if it has one). */
  def requireOwnName(storedName: String, name: Option[String], operator: String): Unit =
    name.foreach { n =>
      if (storedName.nonEmpty && storedName != n) {
        throw new IllegalStateException(
          s"$operator: the state at this operator's position in the checkpoint belongs to the operator named " +
            s"'$storedName'. Spark locates state by operator position, so the query's stateful operators were " +
            "reordered or replaced; restore the original order, or start from a new checkpoint."
        )
      }
    }

  /**
   * Reads one stored value with `body`, which must use all of `in`. The state store hands back whatever bytes the
   * checkpoint holds, and Spark's own checks (compression checksums) do not cover bytes written by something else:
   * those fail here naming the operator, and so do bytes left over, where a reader that stopped early would run on
   * with misread state. Errors of ours that already name the operator pass as they are.
   */
  def decoding[T](in: ByteReader, operator: String, what: String)(body: => T): T = {
    val value =
      try body
      catch {
        case e: IllegalStateException if Option(e.getMessage).exists(_.startsWith(operator)) => throw e
        case NonFatal(e) =>
          val detail = e match {
            case s: IllegalStateException if !s.getMessage.matches("(?s)(truncated|malformed) state.*") => s.getMessage
            case other => s"${Option(other.getMessage).getOrElse(other.getClass.getName)}. $Damaged"
          }
          throw new IllegalStateException(s"$operator: the stored $what cannot be read: $detail", e)
      }
    if (in.remaining != 0) {
      throw new IllegalStateException(
        s"$operator: the stored $what cannot be read: ${in.remaining} bytes are left after it. $Damaged"
      )
    }
    value
  }

  private val Damaged = "The checkpoint's state files are damaged or were not written by spark-suppress: restore " +
    "the checkpoint from a copy, or start from a new checkpoint."
}
