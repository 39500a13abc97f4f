package io.github.sparksuppress.spark.common

import java.nio.charset.StandardCharsets

import io.github.sparksuppress.core.{ByteReader, ByteWriter}

/**
 * The start of every stored state value: a format byte (so a later version can refuse or migrate old state with
 * a clear message) and the operator's name (so that state found at an operator's position in the checkpoint is
 * known to be its own: Spark locates state by position, not by name).
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
    val stored = in.readByte()
    if (!formats.contains(stored)) {
      throw new IllegalStateException(
        s"$operator: the stored $what has format $stored, but this spark-suppress version reads format " +
          s"${formats.mkString(" or ")}. Restart with the spark-suppress version that wrote the checkpoint, or start " +
          "from a new checkpoint.")
    }
    val storedName = new String(in.readBytes(), StandardCharsets.UTF_8)
    name.foreach { n =>
      if (storedName.nonEmpty && storedName != n) {
        throw new IllegalStateException(
          s"$operator: the state at this operator's position in the checkpoint belongs to the operator named " +
            s"'$storedName'. Spark locates state by operator position, so the query's stateful operators were " +
            "reordered or replaced; restore the original order, or start from a new checkpoint.")
      }
    }
    stored
  }
}
