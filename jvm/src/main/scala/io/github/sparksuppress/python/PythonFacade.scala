package io.github.sparksuppress.python

import io.github.sparksuppress.RuntimeCompatibility

/**
 * The one entry point the Python package calls through py4j. Arguments cross as primitives (strings, millis,
 * JSON) and DataFrames; results come back as DataFrames or plain values.
 */
object PythonFacade {

  def version(): String = RuntimeCompatibility.libraryVersion

  /** Fails with a clear message when the JVM runs a Spark or Scala this jar was not built for. */
  def checkRuntime(): Unit = RuntimeCompatibility.check()
}
