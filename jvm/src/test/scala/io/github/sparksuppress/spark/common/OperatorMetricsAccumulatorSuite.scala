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
}
