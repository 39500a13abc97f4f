package io.github.sparksuppress.spark.common

import org.apache.spark.sql.api.java.UDF1

/** Epoch milliseconds of an event-time value (null stays null: the sequencer reports it). */
private[sparksuppress] final class EventMillisUdf extends UDF1[Any, java.lang.Long] {
  override def call(t: Any): java.lang.Long = if (t == null) null else SparkTime.millis(t)
}
