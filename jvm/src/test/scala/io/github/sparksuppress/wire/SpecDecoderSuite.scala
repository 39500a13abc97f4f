package io.github.sparksuppress.wire

import java.nio.charset.StandardCharsets.UTF_8

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.api.{BufferConfig, Suppress, Suppressed}
import io.github.sparksuppress.wire.{proto => wire}

/**
 * The decoder's refusals of messages the Python package never writes (tests/test_wire.py round-trips the ones it
 * does, tests/test_connect_fuzz.py sends spoiled ones through a Connect server).
 */
class SpecDecoderSuite extends AnyFunSuite {

  private val buffer = wire.BufferConfig.newBuilder()
    .setWhenFull(wire.WhenFull.WHEN_FULL_UNBOUNDED)
    .setSizeModel(wire.SizeModel.SIZE_MODEL_KAFKA)
  private val limit = wire.Suppressed.newBuilder()
    .setMode(wire.SuppressionMode.SUPPRESSION_MODE_UNTIL_TIME_LIMIT)
    .setTimeLimitMs(10)
    .setBufferTime(wire.BufferTime.BUFFER_TIME_FIRST)
    .setClock(wire.Clock.CLOCK_EVENT)
    .setBuffer(buffer)
  private val suppress = wire.SuppressSpec.newBuilder()
    .addKey("k")
    .setTimestamp("ts")
    .setSuppressed(limit)
    .setLate(wire.LateRecords.LATE_RECORDS_DROP)
    .build()
  private val windowed = wire.AggregateWindowedSpec.newBuilder()
    .addKey("k")
    .setTimestamp("ts")
    .setWindows(wire.Windows.newBuilder().setTime(wire.TimeWindows.newBuilder().setSizeMs(10).setAdvanceMs(10)))
    .setEmit(wire.EmitStrategy.EMIT_STRATEGY_ON_WINDOW_UPDATE)
    .setLate(wire.LateRecords.LATE_RECORDS_DROP)
    .build()
  private val join = wire.JoinVersionedSpec.newBuilder()
    .addOn("k")
    .setStreamTimestamp("ts")
    .setTableTimestamp("changed")
    .setHow(wire.JoinType.JOIN_TYPE_INNER)
    .setReleaseOnWatermark(true)
    .build()

  private def refused(decode: => Any): String = intercept[IllegalArgumentException](decode).getMessage

  private def suppressed(edit: wire.SuppressSpec.Builder => Unit): String = {
    val b = suppress.toBuilder
    edit(b)
    refused(SpecDecoder.suppress(b.build().toByteArray))
  }

  test("a well-formed spec decodes to the configuration the API builds") {
    assert(SpecDecoder.suppress(suppress.toByteArray) == Suppress(
      "k",
      "ts",
      Suppressed.untilTimeLimit(java.time.Duration.ofMillis(10), BufferConfig.unbounded())
    ))
  }

  test("a choice left unset is refused, never defaulted, naming the field") {
    val unset = Map[String, wire.SuppressSpec.Builder => Unit](
      "SuppressSpec.late" -> (_.clearLate()),
      "SuppressSpec.suppressed.mode" -> (_.getSuppressedBuilder.clearMode()),
      "SuppressSpec.suppressed.buffer_time" -> (_.getSuppressedBuilder.clearBufferTime()),
      "SuppressSpec.suppressed.clock" -> (_.getSuppressedBuilder.clearClock()),
      "SuppressSpec.suppressed.buffer.when_full" -> (_.getSuppressedBuilder.getBufferBuilder.clearWhenFull()),
      "SuppressSpec.suppressed.buffer.size_model" -> (_.getSuppressedBuilder.getBufferBuilder.clearSizeModel())
    )
    unset.foreach { case (path, edit) =>
      val message = suppressed(edit)
      assert(message.startsWith(s"malformed operator spec: `$path` is not set."), message)
      assert(message.contains("proto/spark_suppress/spec.proto"), message)
    }
    assert(refused(SpecDecoder.aggregateWindowed(windowed.toBuilder.clearEmit().build().toByteArray, Nil))
      .contains("`AggregateWindowedSpec.emit` is not set"))
    assert(refused(SpecDecoder.joinVersioned(join.toBuilder.clearHow().build().toByteArray, null, None))
      .contains("`JoinVersionedSpec.how` is not set"))
    assert(refused(SpecDecoder.joinVersioned(join.toBuilder.clearReleaseOnWatermark().build().toByteArray, null, None))
      .contains("`JoinVersionedSpec.release_on_watermark` is not set"))
  }

  test("an enum number this release does not know is refused, naming the field and the number") {
    val unknown = Map[String, wire.SuppressSpec.Builder => Unit](
      "SuppressSpec.late" -> (_.setLateValue(3)),
      "SuppressSpec.suppressed.mode" -> (_.getSuppressedBuilder.setModeValue(-1)),
      "SuppressSpec.suppressed.clock" -> (_.getSuppressedBuilder.setClockValue(1 << 20)),
      "SuppressSpec.suppressed.buffer.when_full" -> (_.getSuppressedBuilder.getBufferBuilder.setWhenFullValue(5))
    )
    unknown.foreach { case (path, edit) =>
      val message = suppressed(edit)
      assert(message.startsWith(s"malformed operator spec: `$path` is "), message)
      assert(message.contains("a value this release does not know"), message)
    }
    assert(refused(SpecDecoder.aggregateWindowed(windowed.toBuilder.setEmitValue(9).build().toByteArray, Nil))
      .contains("`AggregateWindowedSpec.emit` is 9, a value this release does not know"))
    assert(refused(SpecDecoder.joinVersioned(join.toBuilder.setHowValue(3).build().toByteArray, null, None))
      .contains("`JoinVersionedSpec.how` is 3, a value this release does not know"))
  }

  test("required fields and messages left unset are refused, naming the field") {
    assert(suppressed(_.clearTimestamp()).contains("`SuppressSpec.timestamp` is not set"))
    assert(suppressed(_.clearSuppressed()).contains("`SuppressSpec.suppressed` is not set"))
    assert(suppressed(_.getSuppressedBuilder.clearBuffer()).contains("`SuppressSpec.suppressed.buffer` is not set"))
    assert(suppressed(_.getSuppressedBuilder.clearTimeLimitMs()).contains("`SuppressSpec.suppressed.time_limit_ms`"))
    assert(suppressed(_.setWindow(wire.WindowColumns.getDefaultInstance))
      .contains("`SuppressSpec.window` names no columns"))
    assert(refused(SpecDecoder.aggregateWindowed(windowed.toBuilder.clearWindows().build().toByteArray, Nil))
      .contains("`AggregateWindowedSpec.windows` is not set"))
    val noKind = windowed.toBuilder.setWindows(wire.Windows.getDefaultInstance).build()
    assert(refused(SpecDecoder.aggregateWindowed(noKind.toByteArray, Nil))
      .contains("`AggregateWindowedSpec.windows` is none of time, sliding or session"))
  }

  test("fields this release does not know are refused, at any depth") {
    val top = suppress.toByteArray ++ Array[Byte](0x78, 0x01) // field 15, a varint
    assert(
      refused(SpecDecoder.suppress(top)).contains("`SuppressSpec` has fields this release does not know (numbers 15)")
    )
    val nested = suppress.toBuilder
    nested.getSuppressedBuilder.getBufferBuilder.setUnknownFields(
      org.sparkproject.spark_core.protobuf.UnknownFieldSet.newBuilder()
        .addField(9, org.sparkproject.spark_core.protobuf.UnknownFieldSet.Field.newBuilder().addVarint(1).build())
        .build()
    )
    assert(refused(SpecDecoder.suppress(nested.build().toByteArray))
      .contains("`SuppressSpec.suppressed.buffer` has fields this release does not know (numbers 9)"))
  }

  test("JSON specs of earlier releases, empty and damaged bytes are refused by every decoder") {
    val json = """{"key": ["k"], "timestamp": "ts", "suppressed": {"mode": "untilTimeLimit"}}""".getBytes(UTF_8)
    val decoders = Seq[(String, Array[Byte] => Any)](
      "SuppressSpec" -> (b => SpecDecoder.suppress(b)),
      "AggregateWindowedSpec" -> (b => SpecDecoder.aggregateWindowed(b, Nil)),
      "AggregateSpec" -> (b => SpecDecoder.aggregate(b, Nil)),
      "JoinVersionedSpec" -> (b => SpecDecoder.joinVersioned(b, null, None))
    )
    decoders.foreach { case (kind, decode) =>
      assert(refused(decode(json)).startsWith(s"malformed operator spec: the bytes are not a $kind message"))
      assert(refused(decode(Array.emptyByteArray)).contains(s"the client sent no $kind (its bytes are empty)"))
      assert(refused(decode(null)).contains(s"the client sent no $kind"))
      assert(refused(decode(Array.fill[Byte](5000)(0x0b))).startsWith("malformed operator spec: the bytes are not a"))
    }
  }

  test("no field of the spec messages can name a class to load or a file to read: each one is reviewed here") {
    // The review: strings are column names and operator names, numbers are durations and bounds, enums are choices
    // among fixed values. A field added to spec.proto fails here until it is reviewed the same way.
    val reviewed = Map(
      "SuppressSpec" -> Seq(
        "repeated key: STRING",
        "timestamp: STRING",
        "suppressed: MESSAGE",
        "window: MESSAGE",
        "grace_ms: INT64",
        "tombstone: STRING",
        "late: ENUM",
        "idle_timeout_ms: INT64"
      ),
      "Suppressed" -> Seq(
        "mode: ENUM",
        "time_limit_ms: INT64",
        "buffer_time: ENUM",
        "clock: ENUM",
        "name: STRING",
        "buffer: MESSAGE"
      ),
      "BufferConfig" -> Seq("max_records: INT64", "max_bytes: INT64", "when_full: ENUM", "size_model: ENUM"),
      "WindowColumns" -> Seq("struct: STRING", "start_end: MESSAGE"),
      "StartEnd" -> Seq("start: STRING", "end: STRING"),
      "AggregateWindowedSpec" -> Seq(
        "repeated key: STRING",
        "timestamp: STRING",
        "windows: MESSAGE",
        "emit: ENUM",
        "name: STRING",
        "late: ENUM",
        "idle_timeout_ms: INT64"
      ),
      "Windows" -> Seq("time: MESSAGE", "sliding: MESSAGE", "session: MESSAGE"),
      "TimeWindows" -> Seq("size_ms: INT64", "advance_ms: INT64", "grace_ms: INT64"),
      "SlidingWindows" -> Seq("time_difference_ms: INT64", "grace_ms: INT64"),
      "SessionWindows" -> Seq("inactivity_gap_ms: INT64", "grace_ms: INT64"),
      "AggregateSpec" -> Seq("repeated key: STRING", "timestamp: STRING", "name: STRING"),
      "JoinVersionedSpec" -> Seq(
        "repeated on: STRING",
        "stream_timestamp: STRING",
        "table_timestamp: STRING",
        "grace_ms: INT64",
        "history_retention_ms: INT64",
        "how: ENUM",
        "tombstone: STRING",
        "name: STRING",
        "release_on_watermark: BOOL",
        "idle_timeout_ms: INT64"
      )
    )
    val declared = wire.Specs.getDescriptor.getMessageTypes.asScala.map { m =>
      m.getName -> m.getFields.asScala.map(f => s"${if (f.isRepeated) "repeated " else ""}${f.getName}: ${f.getType}")
        .toSeq
    }.toMap
    assert(declared == reviewed)
  }
}
