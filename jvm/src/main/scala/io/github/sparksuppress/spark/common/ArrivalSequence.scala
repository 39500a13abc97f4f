package io.github.sparksuppress.spark.common

import org.apache.spark.TaskContext
import org.apache.spark.sql.Column
import org.apache.spark.sql.api.java.UDF0
import org.apache.spark.sql.functions.udf
import org.apache.spark.sql.types.LongType

/**
 * Numbers rows in arrival order before the shuffle: the input partition in the high bits, the row's position within
 * it in the low bits. The state functions sort each group's rows by it, because the order of rows within a group
 * after Spark's shuffle and sort is not guaranteed, and Kafka applies a key's updates in offset order.
 * (`monotonically_increasing_id` would do the same but Spark refuses it in streaming queries.) Replaying a batch over
 * the same input partitions yields the same numbers.
 */
private[sparksuppress] object ArrivalSequence {
  def column: Column = udf(new Counter, LongType).asNondeterministic().apply()

  /** The sequence number before this task's first row: its input partition in the high bits. */
  def partitionBase(): Long = Option(TaskContext.get()).map(_.partitionId().toLong << 33).getOrElse(0L)

  /**
   * One per task: Spark deserializes the function for each task, which leaves transient fields at the JVM's defaults
   * (their initializers do not run), so the counter notes with a flag, not a sentinel value, that it has not started.
   */
  private final class Counter extends UDF0[java.lang.Long] {
    @transient private var next = 0L
    @transient private var base = 0L
    @transient private var started = false
    override def call(): java.lang.Long = {
      if (!started) { base = partitionBase(); started = true }
      next += 1
      base + next
    }
  }
}
