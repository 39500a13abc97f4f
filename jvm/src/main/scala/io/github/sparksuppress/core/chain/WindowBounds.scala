package io.github.sparksuppress.core.chain

/** A window's bounds as Kafka's windowed keys carry them (end exclusive for time windows, inclusive otherwise). */
final case class WindowBounds(start: Long, end: Long)
