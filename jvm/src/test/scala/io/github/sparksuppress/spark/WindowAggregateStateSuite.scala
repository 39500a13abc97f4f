package io.github.sparksuppress.spark

import org.apache.spark.sql.Row
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.core._
import io.github.sparksuppress.spark.window._

/** The stored form of a key's windows, and the checks that keep a restart from misreading another query's state. */
class WindowAggregateStateSuite extends AnyFunSuite {

  private val aggregates: Array[AggregateColumn] = Array(
    CountAggregate("n", Array.empty),
    SumAggregate("total", 0, LongType, LongType, OverflowMode.Fail),
    PositionalAggregate("first", 1, StringType, isLast = false, ignoreNulls = false)
  )

  private def params(name: Option[String], fingerprint: Long) = WindowAggregateParams(
    operatorName = name.getOrElse("unnamed"),
    explicitName = name,
    definition = TimeWindowDefinition(10, 5, 0),
    mode = EmitMode.OnWindowClose,
    aggregates = aggregates,
    keySchema = StructType(Seq(StructField("k", StringType))),
    groupSchema = StructType(Seq(StructField("k", BinaryType))),
    inputSchema = StructType(Seq(StructField("in0", LongType), StructField("in1", StringType))),
    precombine = false,
    timestampNtz = false,
    fingerprint = fingerprint
  )

  private def stored(p: WindowAggregateParams): Array[Byte] = {
    val buffers = new AggregateBuffers(aggregates)
    val record = new RowInputRecord
    record.row = Row(7L, "x")
    record.ts = 3
    record.seq = 42
    val windows = WindowedAggregator.emptyWindows[AggregateBuffer](p.definition)
    windows.insert(new WindowEntry(0, 10, 3, buffers.add(buffers.initial(), record)))
    WindowAggregateState.write(p, windows, buffers)
  }

  test("windows and buffers come back as stored; first/last forget the batch's arrival order") {
    val p = params(Some("counts"), 1L)
    val buffers = new AggregateBuffers(aggregates)
    val (back, clock) = WindowAggregateState.read(stored(p), p, buffers)
    assert(clock.isEmpty)
    assert(back.size === 1 && back(0).start === 0L && back(0).timestamp === 3L)
    assert(buffers.results(back(0).buffer).toSeq === Seq(1L, 7L, "x"))
    assert(back(0).buffer.parts(2).asInstanceOf[PositionalAggregate.Acc].seq === Long.MinValue)
  }

  test("state written for other windows or aggregates, or by another named operator, is refused with the fix") {
    val written = stored(params(Some("counts"), 1L))
    val buffers = new AggregateBuffers(aggregates)
    val other =
      intercept[IllegalStateException](WindowAggregateState.read(written, params(Some("counts"), 2L), buffers))
    assert(other.getMessage.contains("written for other windows, aggregations or key types") &&
      other.getMessage.contains("start from a new checkpoint"))
    val renamed =
      intercept[IllegalStateException](WindowAggregateState.read(written, params(Some("sessions"), 1L), buffers))
    assert(renamed.getMessage.contains("belongs to the operator named 'counts'"))
    val future = written.clone()
    future(0) = 9
    assert(intercept[IllegalStateException](WindowAggregateState.read(future, params(Some("counts"), 1L), buffers))
      .getMessage.contains("has format 9"))
  }

  test(
    "with an idle timeout the clock is stored too (format 2); state of either format reads with the option on or off"
  ) {
    val plain = params(Some("counts"), 1L)
    val idle = plain.copy(idleTimeoutMs = Some(200L))
    val buffers = new AggregateBuffers(aggregates)
    val clock = new IdleClock(200)
    clock.advance(100, 0)
    clock.advance(100, 500)
    val (windows, _) = WindowAggregateState.read(stored(plain), plain, buffers)
    val written = WindowAggregateState.write(idle, windows, buffers, Some(clock))
    assert(written(0) === WindowAggregateState.IdleFormat && stored(plain)(0) === WindowAggregateState.Format)
    val (back, restored) = WindowAggregateState.read(written, idle, buffers)
    assert(back.size === 1 && restored.map(_.fields) === Some(clock.fields))
    val (withoutOption, none) = WindowAggregateState.read(written, plain, buffers)
    assert(withoutOption.size === 1 && none.isEmpty, "the option switched off: the clock is skipped")
    val (old, fresh) = WindowAggregateState.read(stored(plain), idle, buffers)
    assert(old.size === 1 && fresh.map(_.lastStreamTime) === Some(Long.MinValue), "switched on: a fresh clock")
  }
}
