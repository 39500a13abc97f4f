package io.github.sparksuppress.core

import scala.collection.mutable

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.testkit.Vectors

/**
 * Runs the stream-table join vectors through the pure core, one record at a time and in two stages as the Spark plan
 * does: a [[StreamTableSequencer]] (all keys of the task) followed by one [[TableEntry]] per key.
 */
class StreamTableJoinVectorsSuite extends AnyFunSuite {

  private case class Out(afterSeq: Int, key: String, value: String, ts: Long)

  private def spec(v: JsonNode): StreamTableJoinSpec = {
    val cfg = v.get("config")
    val table = cfg.get("table")
    StreamTableJoinSpec(
      name = v.get("id").asText(),
      joinType = JoinType.fromName(cfg.get("joinType").asText()),
      graceMs = Option(cfg.get("graceMs")).filterNot(_.isNull).map(_.asLong()),
      historyRetentionMs =
        if (table.get("versioned").asBoolean()) Some(table.get("historyRetentionMs").asLong()) else None
    )
  }

  /** The joiner's separator: `streamValue + "+" + tableValue` joins with "+". */
  private def separator(v: JsonNode): String =
    "\"([^\"]*)\"".r.findFirstMatchIn(v.get("config").get("joiner").asText()).get.group(1)

  private def run(v: JsonNode): (Seq[Out], StreamTableJoinMetrics) = {
    val s = spec(v)
    val sep = separator(v)
    val sequencer = new StreamTableSequencer[String, String, String](s)
    val tables = mutable.Map.empty[String, TableEntry[String]]
    val outs = Seq.newBuilder[Out]
    var seq = -1
    val sink = new JoinSequence[String, String, String] {
      def tableWrite(key: String, timestamp: Long, value: String, tableTime: Long): Unit =
        tables.getOrElseUpdate(key, TableEntry[String](s)).write(timestamp, value, tableTime)
      def streamRecord(key: String, timestamp: Long, value: String, tableTime: Long): Unit = {
        val tableValue = tables.get(key).map(_.lookup(timestamp, tableTime)).orNull
        if (tableValue != null || s.joinType.emitsWithoutTableValue) {
          outs += Out(seq, key, s"$value$sep${if (tableValue == null) "null" else tableValue}", timestamp)
        }
      }
    }
    Vectors.array(v.get("input")).foreach { r =>
      seq = r.get("seq").asInt()
      val key = Vectors.textOrNull(r.get("key"))
      val value = Vectors.textOrNull(r.get("value"))
      val ts = r.get("ts").asLong()
      r.get("side").asText() match {
        case "table" => sequencer.table(key, key == null, ts, value, sink)
        case "stream" => sequencer.stream(key, key == null, value == null, ts, value, 1L, sink)
      }
    }
    (outs.result(), sequencer.metrics)
  }

  /** Outputs per step and key, in order (order across keys within a step is free). */
  private def grouped(outs: Seq[Out]): Map[(Int, String), Seq[(String, Long)]] =
    outs.groupBy(o => (o.afterSeq, o.key)).map { case (k, os) => k -> os.map(o => (o.value, o.ts)) }

  private val families = Seq("grace_join.json", "versioned_lookup.json", "stream_table_join_no_grace.json")

  for (v <- families.flatMap(Vectors.family) if !v.has("optional")) {
    test(v.get("id").asText()) {
      val (outs, metrics) = run(v)
      val expected = Vectors.array(v.get("expected")).map { o =>
        Out(o.get("after_seq").asInt(), o.get("key").asText(), o.get("value").asText(), o.get("ts").asLong())
      }
      assert(grouped(outs) === grouped(expected), Option(v.get("notes")).map(_.asText()).getOrElse(""))
      Vectors.array(v.get("expected_metrics")).foreach { m =>
        assert(metrics.droppedTotal.toDouble === m.get("dropped-records-total").asDouble())
      }
    }
  }

  for (v <- Vectors.family("grace_join_errors.json")) {
    test(v.get("id").asText()) {
      val message = v.get("expected_error").asText()
      val (grace, retention) =
        if (message.contains("History retention")) (Some(6L * 60000), Some(5L * 60000)) else (Some(6L), None)
      val e = intercept[IllegalArgumentException](StreamTableJoinSpec("join", JoinType.Inner, grace, retention))
      assert(message.contains(e.getMessage.stripPrefix("requirement failed: ")), e.getMessage)
    }
  }

  test("grace equal to history retention is allowed") {
    assert(StreamTableJoinSpec("join", JoinType.Left, Some(5), Some(5)).graceMs === Some(5L))
  }
}
