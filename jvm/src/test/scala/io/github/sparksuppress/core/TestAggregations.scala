package io.github.sparksuppress.core

import scala.collection.mutable.ArrayBuffer

/** Aggregations of the Kafka tests: string concatenation (not a monoid) and count. */
object TestAggregations {

  /** Kafka's test aggregator: initializer `zero`, aggregator `agg + sep + value`, merger `agg1 + sep + agg2`. */
  final class StringFold(zero: String, sep: String = "+") extends Aggregation[String, String] {
    def initial(): String = zero
    def add(buffer: String, value: String): String = buffer + sep + value
    def merge(buffer: String, other: String): String = buffer + sep + other
    def copy(buffer: String): String = buffer
  }

  /** A mutable counter, so that tests notice an aggregator that shares buffers it should have copied. */
  final class Counter(var n: Long) { override def toString: String = n.toString }

  object Count extends Aggregation[Any, Counter] {
    def initial(): Counter = new Counter(0)
    def add(buffer: Counter, value: Any): Counter = { buffer.n += 1; buffer }
    def merge(buffer: Counter, other: Counter): Counter = { buffer.n += other.n; buffer }
    def copy(buffer: Counter): Counter = new Counter(buffer.n)
  }

  /** What a sink saw: (kind, start, end, timestamp, rendered buffer); kind is "result" or "retraction". */
  final class Recording[B](render: B => String = (b: B) => String.valueOf(b)) extends WindowSink[B] {
    val seen = new ArrayBuffer[(String, Long, Long, Long, String)]
    def result(start: Long, end: Long, timestamp: Long, buffer: B): Unit =
      seen += (("result", start, end, timestamp, render(buffer)))
    def retraction(start: Long, end: Long, timestamp: Long, buffer: B): Unit =
      seen += (("retraction", start, end, timestamp, render(buffer)))
    def take(): Seq[(String, Long, Long, Long, String)] = { val s = seen.toList; seen.clear(); s }
  }
}
