package io.github.sparksuppress.spark.common

import io.github.sparksuppress.spark.SparkSessionSuite

/**
 * The arrival sequence orders rows of different input partitions by partition, as the state functions rely on: the
 * partition must reach the number's high bits in every task, where the function arrives deserialized.
 */
class ArrivalSequenceSuite extends SparkSessionSuite {

  test("each input partition's rows are numbered after every row of the partitions before it, in input order") {
    val numbered = spark.range(0, 6, 1, numPartitions = 3).select(ArrivalSequence.column.as("seq")).collect()
      .map(_.getLong(0)).toSeq
    val partitions = numbered.map(_ >> 33)
    assert(partitions === Seq(0L, 0L, 1L, 1L, 2L, 2L), numbered)
    assert(numbered === numbered.sorted, "within and across partitions, input order")
    assert(numbered.map(_ & ((1L << 33) - 1)) === Seq(1L, 2L, 1L, 2L, 1L, 2L))
  }
}
