package io.github.sparksuppress.core

import scala.collection.mutable

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.core.TestAggregations._
import io.github.sparksuppress.testkit.Vectors

/**
 * Every emit-strategy vector through the pure core, with Kafka's own execution model: one task, stream time = the
 * largest timestamp of the non-null-key records so far (starting at -1), and after each record every key's windows
 * closed at that stream time are emitted (Kafka's fetchAll over all keys).
 */
class EmitVectorsSuite extends AnyFunSuite {

  private case class Out(afterSeq: Int, key: String, start: Long, end: Long, value: String, ts: Long)

  private def definition(w: JsonNode): WindowDefinition = w.get("type").asText() match {
    case "time" =>
      TimeWindowDefinition(w.get("sizeMs").asLong(), w.get("advanceMs").asLong(), w.get("graceMs").asLong())
    case "session" => SessionWindowDefinition(w.get("gapMs").asLong(), w.get("graceMs").asLong())
    case "sliding" => SlidingWindowDefinition(w.get("timeDifferenceMs").asLong(), w.get("graceMs").asLong())
  }

  private def aggregation(cfg: JsonNode): Aggregation[String, Any] = {
    val a = cfg.get("aggregation")
    val underlying: Aggregation[String, _] =
      if (a.isTextual) { assert(a.asText() == "count"); Count }
      else {
        assert(a.get("aggregator").asText() == "agg + \"+\" + value")
        if (a.has("sessionMerger")) assert(a.get("sessionMerger").asText() == "agg1 + \"+\" + agg2")
        new StringFold(a.get("initializer").asText().stripPrefix("\"").stripSuffix("\""))
      }
    underlying.asInstanceOf[Aggregation[String, Any]]
  }

  private final case class Run(outs: Seq[Out], dropped: Long, emittedFinal: Long, lateness: LatenessSketch.Result)

  private def run(v: JsonNode): Run = {
    val cfg = v.get("config")
    val d = definition(cfg.get("window"))
    val mode =
      if (cfg.get("emitStrategy").asText() == "onWindowClose") EmitMode.OnWindowClose else EmitMode.OnWindowUpdate
    val agg = aggregation(cfg)
    val keys = mutable.LinkedHashMap.empty[String, WindowedAggregator[String, Any]]
    val outs = Seq.newBuilder[Out]
    val lateness = new LatenessSketch()
    var st = -1L
    var nullKeys = 0L
    Vectors.array(v.get("input")).foreach { r =>
      val seq = r.get("seq").asInt()
      val ts = r.get("ts").asLong()
      lateness.add(ts)
      def sinkFor(key: String) = new WindowSink[Any] {
        def result(start: Long, end: Long, timestamp: Long, buffer: Any): Unit =
          outs += Out(seq, key, start, end, buffer.toString, timestamp)
        def retraction(start: Long, end: Long, timestamp: Long, buffer: Any): Unit =
          outs += Out(seq, key, start, end, null, timestamp)
      }
      if (r.get("key").isNull) nullKeys += 1
      else {
        val key = r.get("key").asText()
        st = math.max(st, ts)
        val a = keys.getOrElseUpdate(key, WindowedAggregator(d, mode, agg, WindowedAggregator.emptyWindows[Any](d)))
        a.closeDue(st, sinkFor(key))
        a.add(Vectors.textOrNull(r.get("value")), ts, st, sinkFor(key))
        keys.foreach { case (k, other) => other.closeDue(st, sinkFor(k)) }
      }
    }
    Run(
      outs.result(),
      nullKeys + keys.values.map(_.metrics.dropped).sum,
      keys.values.map(_.metrics.emittedFinal).sum,
      lateness.evaluate(-1)
    )
  }

  private def expected(v: JsonNode): Seq[Out] = Vectors.array(v.get("expected")).map { o =>
    val value = o.get("value")
    Out(
      o.get("after_seq").asInt(),
      o.get("key").asText(),
      o.get("window_start").asLong(),
      o.get("window_end").asLong(),
      if (value.isNull) null else value.asText(),
      o.get("ts").asLong()
    )
  }

  /** Within a step, outputs of one key keep their order; across keys the order is free (as in the vectors). */
  private def byStepAndKey(outs: Seq[Out]): Map[(Int, String), Seq[Out]] = outs.groupBy(o => (o.afterSeq, o.key))

  private val vectors = Seq("emit_time_windows.json", "emit_session_windows.json").flatMap(Vectors.family)
    .filterNot(_.has("optional"))

  for (v <- vectors) {
    test(v.get("id").asText()) {
      val result = run(v)
      assert(
        byStepAndKey(result.outs) === byStepAndKey(expected(v)),
        Option(v.get("notes")).map(_.asText()).getOrElse("")
      )
      Option(v.get("expected_metrics")).foreach { m =>
        Option(m.get("dropped-records-total")).foreach(x => assert(result.dropped.toDouble === x.asDouble()))
        Option(m.get("window-aggregate-final-emit-total")).foreach(x =>
          assert(result.emittedFinal.toDouble === x.asDouble())
        )
        Option(m.get("record-lateness-max")).foreach(x => assert(result.lateness.max.toDouble === x.asDouble()))
        Option(m.get("record-lateness-avg")).foreach { x =>
          assert(result.lateness.total.toDouble / result.lateness.records === x.asDouble())
        }
      }
    }
  }

  test("every non-optional emit vector of the time and session families ran") {
    assert(vectors.size === 17)
  }
}
