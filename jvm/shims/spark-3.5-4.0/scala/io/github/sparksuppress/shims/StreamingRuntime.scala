package io.github.sparksuppress.shims

// Spark 4.1 moved the micro-batch runtime (MemoryStream, the test source TestDriver and the suites feed, and
// MicroBatchExecution) into org.apache.spark.sql.execution.streaming.runtime; 3.5 and 4.0 keep it in
// org.apache.spark.sql.execution.streaming. MemoryStream's factories taking an SQLContext exist on every line.
private[sparksuppress] object StreamingRuntime {
  type MemoryStream[A] = org.apache.spark.sql.execution.streaming.MemoryStream[A]
  val MemoryStream = org.apache.spark.sql.execution.streaming.MemoryStream

  /** The local property naming the micro-batch a task belongs to. */
  val BatchIdKey: String = org.apache.spark.sql.execution.streaming.MicroBatchExecution.BATCH_ID_KEY

  /** A started query as `spark.streams` hands it out, and the stateful operators of its plan (StateCheck). */
  type StreamingQueryWrapper = org.apache.spark.sql.execution.streaming.StreamingQueryWrapper
  type StatefulOperator = org.apache.spark.sql.execution.streaming.StatefulOperator
}
