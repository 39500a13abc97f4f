package io.github.sparksuppress.spark.common

import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.spark.common.OperatorMetricsAccumulator.Snapshot

class OperatorMetricsAccumulatorSuite extends AnyFunSuite {

  /**
   * The accumulator as an executor's heartbeat thread can see it: Spark registers it with its task from
   * `AccumulatorV2.readObject`, before Java's deserialization has read this class's fields, so they are all null.
   * Allocating it without running a constructor leaves it in that state.
   */
  private def halfDeserialized(): OperatorMetricsAccumulator = {
    val field = classOf[sun.misc.Unsafe].getDeclaredField("theUnsafe")
    field.setAccessible(true)
    val unsafe = field.get(null).asInstanceOf[sun.misc.Unsafe]
    unsafe.allocateInstance(classOf[OperatorMetricsAccumulator]).asInstanceOf[OperatorMetricsAccumulator]
  }

  private def filled(): OperatorMetricsAccumulator = {
    val a = new OperatorMetricsAccumulator
    a.count("records", 3)
    a.gauge("buffered", 0, 5)
    a.gaugeDelta("keys", 2)
    a.max("lateness", 7)
    a.sample("batch", 4.0)
    a
  }

  test("an accumulator the heartbeat thread meets before its fields are deserialized reads as zero") {
    val a = halfDeserialized()
    assert(a.isZero)
    assert(a.value == Snapshot(Map.empty, Map.empty, Map.empty, Map.empty))
    val c = a.copy()
    assert(c.isZero)
    c.count("records", 1)
    assert(c.value.counters == Map("records" -> 1L))
  }

  test("merging an accumulator not yet deserialized changes nothing") {
    val a = filled()
    val before = a.value
    a.merge(halfDeserialized())
    assert(a.value == before)
    assert(before.counters == Map("records" -> 3L))
    assert(before.gauges == Map("buffered" -> 5L, "keys" -> 2L))
    assert(before.maxima == Map("lateness" -> 7L))
    assert(before.averages == Map("batch" -> 4.0))
  }

  test("a copy and its accumulator change apart, and a merged accumulator stays as it was merged") {
    val a = filled()
    val c = a.copy()
    a.count("records", 1); a.gaugeDelta("keys", 1); a.max("lateness", 9)
    c.count("records", 10)
    assert(a.value.counters == Map("records" -> 4L) && a.value.maxima == Map("lateness" -> 9L))
    assert(c.value.counters == Map("records" -> 13L) && c.value.maxima == Map("lateness" -> 7L))
    assert(c.value.gauges == Map("buffered" -> 5L, "keys" -> 2L))
    val total = new OperatorMetricsAccumulator
    total.merge(a)
    total.merge(c)
    a.count("records", 100); c.max("lateness", 100)
    assert(total.value.counters == Map("records" -> 17L) && total.value.maxima == Map("lateness" -> 9L))
    assert(total.value.gauges == Map("buffered" -> 5L, "keys" -> 5L))
  }

  /**
   * Java-serializes `a` as an executor sends it to the driver in a heartbeat, and reads it back as the driver does.
   */
  private def sentFromExecutor(a: OperatorMetricsAccumulator): OperatorMetricsAccumulator = {
    val bytes = new java.io.ByteArrayOutputStream()
    val out = new java.io.ObjectOutputStream(bytes)
    out.writeObject(a)
    out.close()
    val in = new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(bytes.toByteArray))
    in.readObject().asInstanceOf[OperatorMetricsAccumulator]
  }

  /** `a` as its task's copy on an executor: Spark then serializes the live accumulator itself, not a copy of it. */
  private def onExecutor(a: OperatorMetricsAccumulator): OperatorMetricsAccumulator = {
    // AccumulatorV2's flag is Spark-private; its deserialization clears it on executors, this does the same.
    val flag = classOf[org.apache.spark.util.AccumulatorV2[_, _]].getDeclaredField("atDriverSide")
    flag.setAccessible(true)
    flag.setBoolean(a, false)
    a
  }

  test("the heartbeat can read and send the accumulator while its task adds to it") {
    // The task thread adds new names (each one changes the maps' structure) while a second thread, as the heartbeat
    // does, reads `value` (local mode) and serializes the live accumulator (a cluster). Neither may fail, and what the
    // driver reads must be a consistent part of what was added.
    val a = onExecutor(new OperatorMetricsAccumulator)
    val names = 20000
    val reading = new java.util.concurrent.CountDownLatch(1)
    @volatile var failure: Throwable = null
    val task = new Thread(() =>
      try {
        reading.await()
        var i = 0
        while (i < names && failure == null) {
          a.count(s"c$i", 1); a.gauge(s"g$i", i, 2); a.gaugeDelta(s"d$i", 3); a.max(s"m$i", 4); a.sample(s"s$i", 5.0)
          i += 1
        }
      } catch { case t: Throwable => failure = t }
    )
    task.start()
    var reads = 0
    try {
      reading.countDown()
      do {
        val snapshot = a.value
        val sent = sentFromExecutor(a).value
        for (s <- Seq(snapshot, sent)) {
          assert(s.counters.values.forall(_ == 1L))
          assert(s.gauges.forall { case (n, v) => v == (if (n.startsWith("g")) 2L else 3L) })
          assert(s.maxima.values.forall(_ == 4L))
          assert(s.averages.values.forall(_ == 5.0))
        }
        reads += 1
      } while (task.isAlive && failure == null)
    } catch { case t: Throwable => failure = t }
    task.join()
    if (failure != null) fail(s"after $reads reads: $failure", failure)
    val done = sentFromExecutor(a).value
    assert(done.counters.size == names && done.gauges.size == 2 * names && done.averages.size == names)
  }
}
