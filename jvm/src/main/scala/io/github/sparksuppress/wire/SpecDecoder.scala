package io.github.sparksuppress.wire

import java.time.Duration

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{Column, DataFrame}
import org.sparkproject.spark_core.protobuf.{InvalidProtocolBufferException, Message}

import io.github.sparksuppress.api._
import io.github.sparksuppress.core.{EntrySizeModel, SuppressionClock}
import io.github.sparksuppress.wire.{proto => wire}

/**
 * The one reader of the operators' spec messages (proto/spark_suppress/spec.proto), for both transports: each spec
 * becomes the public API's configuration through the API's own factories, so its values are validated as a Scala
 * user's are. The bytes come from any client of a shared Connect server, so the reader is strict: a message that does
 * not parse, carries fields this release does not know, leaves a required field or a choice unset, or holds an enum
 * number this release does not know is refused, naming the field; nothing is defaulted.
 */
private[sparksuppress] object SpecDecoder {

  def suppress(bytes: Array[Byte]): Suppress = {
    val spec = parse("SuppressSpec", bytes)(wire.SuppressSpec.parseFrom)
    val path = "SuppressSpec"
    known(spec, path)
    val window =
      if (!spec.hasWindow) None
      else Some(windowColumns(spec.getWindow, s"$path.window"))
    val op = Suppress(
      key = spec.getKeyList.asScala.toList,
      timestamp = required(spec.getTimestamp, s"$path.timestamp"),
      suppressed = suppressed(message(spec.hasSuppressed, spec.getSuppressed, s"$path.suppressed")),
      window = window,
      grace = optionalMillis(spec.hasGraceMs, spec.getGraceMs),
      tombstone = if (spec.hasTombstone) Some(spec.getTombstone) else None,
      lateRecords = lateRecords(spec.getLate, spec.getLateValue, s"$path.late")
    )
    optionalMillis(spec.hasIdleTimeoutMs, spec.getIdleTimeoutMs).map(op.withIdleTimeout).getOrElse(op)
  }

  def aggregateWindowed(bytes: Array[Byte], aggregations: Seq[Column]): AggregateWindowed = {
    val spec = parse("AggregateWindowedSpec", bytes)(wire.AggregateWindowedSpec.parseFrom)
    val path = "AggregateWindowedSpec"
    known(spec, path)
    val op = AggregateWindowed(
      key = spec.getKeyList.asScala.toList,
      timestamp = required(spec.getTimestamp, s"$path.timestamp"),
      windows = windows(message(spec.hasWindows, spec.getWindows, s"$path.windows"), s"$path.windows"),
      aggregations = aggregations,
      emit = choice(spec.getEmit, spec.getEmitValue, s"$path.emit") {
        case wire.EmitStrategy.EMIT_STRATEGY_ON_WINDOW_CLOSE => EmitStrategy.onWindowClose()
        case wire.EmitStrategy.EMIT_STRATEGY_ON_WINDOW_UPDATE => EmitStrategy.onWindowUpdate()
      },
      lateRecords = lateRecords(spec.getLate, spec.getLateValue, s"$path.late")
    )
    val named = if (spec.hasName) op.withName(spec.getName) else op
    optionalMillis(spec.hasIdleTimeoutMs, spec.getIdleTimeoutMs).map(named.withIdleTimeout).getOrElse(named)
  }

  def aggregate(bytes: Array[Byte], aggregations: Seq[Column]): Aggregate = {
    val spec = parse("AggregateSpec", bytes)(wire.AggregateSpec.parseFrom)
    known(spec, "AggregateSpec")
    val op = Aggregate(
      key = spec.getKeyList.asScala.toList,
      timestamp = required(spec.getTimestamp, "AggregateSpec.timestamp"),
      aggregations = aggregations
    )
    if (spec.hasName) op.withName(spec.getName) else op
  }

  /** The join of `table` (and its `initialVersions`, when there are some) that `bytes` describes. */
  def joinVersioned(bytes: Array[Byte], table: DataFrame, initialVersions: Option[DataFrame]): StreamTableJoin = {
    val spec = parse("JoinVersionedSpec", bytes)(wire.JoinVersionedSpec.parseFrom)
    val path = "JoinVersionedSpec"
    known(spec, path)
    val changelog = ChangelogTable.nonVersioned(table, required(spec.getTableTimestamp, s"$path.table_timestamp"))
    val retained = optionalMillis(spec.hasHistoryRetentionMs, spec.getHistoryRetentionMs)
      .map(changelog.withHistoryRetention).getOrElse(changelog)
    val tombstoned = if (spec.hasTombstone) retained.withTombstone(spec.getTombstone) else retained
    val seeded = initialVersions.map(tombstoned.withInitialVersions).getOrElse(tombstoned)
    val how = choice(spec.getHow, spec.getHowValue, s"$path.how") {
      case wire.JoinType.JOIN_TYPE_INNER => Joined.inner()
      case wire.JoinType.JOIN_TYPE_LEFT => Joined.left()
    }
    val graced = optionalMillis(spec.hasGraceMs, spec.getGraceMs).map(how.withGracePeriod).getOrElse(how)
    val named = if (spec.hasName) graced.withName(spec.getName) else graced
    val timed = optionalMillis(spec.hasIdleTimeoutMs, spec.getIdleTimeoutMs).map(named.withIdleTimeout).getOrElse(named)
    if (!spec.hasReleaseOnWatermark) throw malformed(s"`$path.release_on_watermark` is not set")
    val joined = if (spec.getReleaseOnWatermark) timed else timed.withoutWatermarkRelease()
    val streamTimestamp = required(spec.getStreamTimestamp, s"$path.stream_timestamp")
    StreamTableJoin(spec.getOnList.asScala.toList, streamTimestamp, seeded, joined)
  }

  private def suppressed(s: wire.Suppressed): Suppressed = {
    val path = "SuppressSpec.suppressed"
    known(s, path)
    val buffer = bufferConfig(message(s.hasBuffer, s.getBuffer, s"$path.buffer"))
    val timerReset = choice(s.getBufferTime, s.getBufferTimeValue, s"$path.buffer_time") {
      case wire.BufferTime.BUFFER_TIME_FIRST => false
      case wire.BufferTime.BUFFER_TIME_LATEST => true
    }
    val clock = choice(s.getClock, s.getClockValue, s"$path.clock") {
      case wire.Clock.CLOCK_EVENT => SuppressionClock.EventTime
      case wire.Clock.CLOCK_PROCESSING => SuppressionClock.ProcessingTime
    }
    val base: Suppressed = choice(s.getMode, s.getModeValue, s"$path.mode") {
      case wire.SuppressionMode.SUPPRESSION_MODE_UNTIL_TIME_LIMIT =>
        if (!s.hasTimeLimitMs) throw malformed(s"`$path.time_limit_ms` is not set (until_time_limit needs it)")
        val limit = Suppressed.untilTimeLimit(Duration.ofMillis(s.getTimeLimitMs), buffer).withClock(clock)
        if (timerReset) limit.withTimerReset() else limit
      case wire.SuppressionMode.SUPPRESSION_MODE_UNTIL_WINDOW_CLOSES =>
        if (timerReset) {
          throw new IllegalArgumentException("withTimerReset() applies to untilTimeLimit only: final results leave " +
            "when their window closes, whatever the updates' timestamps.")
        }
        buffer match {
          case strict: StrictBufferConfig => Suppressed.untilWindowCloses(strict)
          case eager =>
            throw new IllegalArgumentException(
              s"untilWindowCloses accepts only strict buffer configs (unbounded, shutDownWhenFull or spillToDisk); " +
                s"got $eager, which may emit early."
            )
        }
    }
    if (s.hasName) base.withName(s.getName) else base
  }

  private def bufferConfig(b: wire.BufferConfig): BufferConfig = {
    val path = "SuppressSpec.suppressed.buffer"
    known(b, path)
    val model = choice(b.getSizeModel, b.getSizeModelValue, s"$path.size_model") {
      case wire.SizeModel.SIZE_MODEL_KAFKA => EntrySizeModel.Kafka
      case wire.SizeModel.SIZE_MODEL_VALUE_BYTES => EntrySizeModel.ValueBytes
    }
    val records = if (b.hasMaxRecords) Some(b.getMaxRecords) else None
    val bytes = if (b.hasMaxBytes) Some(b.getMaxBytes) else None
    val bounded = records.foldLeft(BufferConfig.unbounded(): BufferConfig)((c, n) => c.withMaxRecords(n))
    val withBytes = bytes.foldLeft(bounded)((c, n) => c.withMaxBytes(n)).withSizeModel(model)
    choice(b.getWhenFull, b.getWhenFullValue, s"$path.when_full") {
      case wire.WhenFull.WHEN_FULL_EMIT_EARLY => withBytes.emitEarlyWhenFull()
      case wire.WhenFull.WHEN_FULL_SHUT_DOWN => withBytes.shutDownWhenFull()
      case wire.WhenFull.WHEN_FULL_SPILL_TO_DISK => withBytes.spillToDisk()
      case wire.WhenFull.WHEN_FULL_UNBOUNDED => BufferConfig.unbounded().withSizeModel(model)
    }
  }

  private def windowColumns(w: wire.WindowColumns, path: String): WindowColumns = {
    known(w, path)
    w.getColumnsCase match {
      case wire.WindowColumns.ColumnsCase.STRUCT => WindowColumns.struct(required(w.getStruct, s"$path.struct"))
      case wire.WindowColumns.ColumnsCase.START_END =>
        val se = w.getStartEnd
        known(se, s"$path.start_end")
        val start = required(se.getStart, s"$path.start_end.start")
        WindowColumns.startEnd(start, required(se.getEnd, s"$path.start_end.end"))
      case _ => throw malformed(s"`$path` names no columns (struct or start_end)")
    }
  }

  private def windows(w: wire.Windows, path: String): Windows = {
    known(w, path)
    def ms(v: Long) = Duration.ofMillis(v)
    w.getKindCase match {
      case wire.Windows.KindCase.TIME =>
        val t = w.getTime
        known(t, s"$path.time")
        TimeWindows.ofSizeAndGrace(ms(t.getSizeMs), ms(t.getGraceMs)).advanceBy(ms(t.getAdvanceMs))
      case wire.Windows.KindCase.SLIDING =>
        val s = w.getSliding
        known(s, s"$path.sliding")
        SlidingWindows.ofTimeDifferenceAndGrace(ms(s.getTimeDifferenceMs), ms(s.getGraceMs))
      case wire.Windows.KindCase.SESSION =>
        val s = w.getSession
        known(s, s"$path.session")
        SessionWindows.ofInactivityGapAndGrace(ms(s.getInactivityGapMs), ms(s.getGraceMs))
      case _ => throw malformed(s"`$path` is none of time, sliding or session")
    }
  }

  private def lateRecords(late: wire.LateRecords, number: Int, path: String): LateRecords =
    choice(late, number, path) {
      case wire.LateRecords.LATE_RECORDS_DROP => LateRecords.Drop
      case wire.LateRecords.LATE_RECORDS_EMIT => LateRecords.Emit
    }

  private def parse[T](kind: String, bytes: Array[Byte])(parser: Array[Byte] => T): T = {
    if (bytes == null || bytes.isEmpty) throw malformed(s"the client sent no $kind (its bytes are empty)")
    try parser(bytes)
    catch {
      case e: InvalidProtocolBufferException =>
        throw malformed(s"the bytes are not a $kind message (${shown(e.getMessage)})")
    }
  }

  /**
   * Refuses fields this release does not know: a client of the same release sends none, so they are damage or another
   * format (a JSON spec of earlier releases, whose text can parse as fields of unknown numbers).
   */
  private def known(m: Message, path: String): Unit = {
    val unknown = m.getUnknownFields.asMap.keySet.asScala
    if (unknown.nonEmpty)
      throw malformed(s"`$path` has fields this release does not know (numbers ${unknown.mkString(", ")})")
  }

  private def message[T](present: Boolean, value: => T, path: String): T =
    if (present) value else throw malformed(s"`$path` is not set")

  private def required(text: String, path: String): String =
    if (text.isEmpty) throw malformed(s"`$path` is not set") else text

  private def optionalMillis(present: Boolean, ms: => Long): Option[Duration] =
    if (present) Some(Duration.ofMillis(ms)) else None

  /**
   * The value an enum field chooses, given with its number on the wire. The zero value (unset) and numbers this
   * release does not know (which proto3 parses into the enum's UNRECOGNIZED) are refused, never read as a default.
   */
  private def choice[E, T](value: E, number: Int, path: String)(pick: PartialFunction[E, T]): T =
    if (number == 0) throw malformed(s"`$path` is not set")
    else pick.applyOrElse(value, (_: E) => throw malformed(s"`$path` is $number, a value this release does not know"))

  /** A value of the client's, cut short: the error goes back to the client and into the server's log. */
  private def shown(value: String): String =
    if (value == null) "" else if (value.length <= 80) value else value.take(80) + s"… (${value.length} chars)"

  private def malformed(what: String): IllegalArgumentException = new IllegalArgumentException(
    s"malformed operator spec: $what. The spark_suppress Python package writes this spec (its fields: " +
      "proto/spark_suppress/spec.proto); a client of the same release as the server's jar sends a well-formed one."
  )
}
