package io.github.sparksuppress.api

import java.time.format.DateTimeParseException

import scala.util.DynamicVariable
import scala.util.matching.Regex

/**
 * Validation messages in the caller's language. The rules and their messages live once, on the JVM, written in the
 * Scala API's spelling; a call that comes from Python runs inside [[forPython]], which rewrites the message of any
 * `IllegalArgumentException` it raises into the Python API's spelling: `untilWindowCloses` becomes
 * `until_window_closes`, `shutDownWhenFull()` becomes `shut_down_when_full()`, durations become `timedelta`s. Quoted
 * values (column names, user input), Spark settings and Spark's own camel-case methods are left as they are. Where
 * the two APIs differ by more than spelling, a message picks its words with [[choose]].
 */
private[sparksuppress] object Spelling {
  private val python = new DynamicVariable[Boolean](false)

  /** Runs `body` as a call from Python: messages chosen and rewritten for Python users. */
  def forPython[T](body: => T): T = python.withValue(true) {
    try body
    catch {
      case e: IllegalArgumentException =>
        // Not chained to `e`: clients that print the JVM's trace (Spark Connect) would show the Scala words again.
        val python = new IllegalArgumentException(toPython(e.getMessage))
        python.setStackTrace(e.getStackTrace)
        throw python
    }
  }

  /** The wording for the current caller. */
  def choose(scala: => String, python: => String): String = if (this.python.value) python else scala

  /** PySpark spells these DataFrame and streaming methods in camel case too. */
  private val sparkMethods = Set(
    "withWatermark",
    "withColumnRenamed",
    "withColumn",
    "groupBy",
    "readStream",
    "writeStream",
    "flatMapGroupsWithState",
    "applyInPandasWithState",
    "transformWithState",
    "isStreaming",
    "processAllAvailable",
    "toDF",
    "selectExpr"
  )

  /** Words Python spells differently, not only in snake case. */
  private val renamed = Map("gracePeriod" -> "grace")

  // Left alone: 'quoted values', "quoted strings", `identifiers` (as Spark's own messages quote them), Spark
  // settings (spark.a.b); class and object names are not camel case with a lower-case start, so they stay too.
  private val protectedText: Regex = """'[^']*'|"[^"]*"|`[^`]*`|\bspark(?:\.\w+)+""".r
  private val camel: Regex = """\b[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+\b""".r
  private val durationOf: Regex = """\b(?:java\.time\.)?Duration\.of(Millis|Seconds|Minutes|Hours|Days)\(([^)]*)\)""".r
  private val isoDuration: Regex = """\bP(?:\d+D)?T[-0-9.HMS]+\b""".r

  def toPython(message: String): String = {
    if (message == null) return null
    val out = new StringBuilder
    var last = 0
    protectedText.findAllMatchIn(message).foreach { m =>
      out ++= plain(message.substring(last, m.start)) ++= m.matched
      last = m.end
    }
    (out ++= plain(message.substring(last))).toString
  }

  private def plain(text: String): String = {
    val durations = isoDuration.replaceAllIn(
      durationOf.replaceAllIn(
        text.replace("java.time.Duration", "datetime.timedelta").replace("Duration.ZERO", "timedelta(0)"),
        m => Regex.quoteReplacement(s"timedelta(${unit(m.group(1))}=${m.group(2)})")
      ),
      m => Regex.quoteReplacement(isoAsTimedelta(m.matched))
    )
    camel.replaceAllIn(durations, m => Regex.quoteReplacement(snake(m.matched)))
  }

  private def unit(javaUnit: String): String = if (javaUnit == "Millis") "milliseconds" else javaUnit.toLowerCase

  private def snake(word: String): String =
    if (sparkMethods(word)) word
    else renamed.getOrElse(word, word.replaceAll("([A-Z])", "_$1").toLowerCase)

  private def isoAsTimedelta(iso: String): String =
    try s"timedelta(milliseconds=${java.time.Duration.parse(iso).toMillis})"
    catch { case _: DateTimeParseException | _: ArithmeticException => iso }
}
