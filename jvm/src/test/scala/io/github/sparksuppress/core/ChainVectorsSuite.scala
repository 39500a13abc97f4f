package io.github.sparksuppress.core

import scala.collection.mutable

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.core.TestAggregations._
import io.github.sparksuppress.core.chain._
import io.github.sparksuppress.testkit.Vectors

/**
 * Every chain vector (`chains.json`) through the pure core's [[Chain]], built from the vector's config fields, with
 * Kafka's execution model: one task, one record at a time. Each step's output is compared with `expected`; on a
 * mismatch the message also compares every intermediate node's output with `expected_stages`.
 */
class ChainVectorsSuite extends AnyFunSuite {

  private case class Out(afterSeq: Int, key: String, window: Option[(Long, Long)], value: String, ts: Long)

  private def definition(w: JsonNode): WindowDefinition = w.get("type").asText() match {
    case "time" =>
      TimeWindowDefinition(w.get("sizeMs").asLong(), w.get("advanceMs").asLong(), w.get("graceMs").asLong())
    case "session" => SessionWindowDefinition(w.get("gapMs").asLong(), w.get("graceMs").asLong())
    case "sliding" => SlidingWindowDefinition(w.get("timeDifferenceMs").asLong(), w.get("graceMs").asLong())
    case other => fail(s"unknown window type $other")
  }

  /** The string between the first pair of quotes: the separator of `agg + "|" + value`-style expressions. */
  private def quoted(expression: String): String = "\"([^\"]*)\"".r.findFirstMatchIn(expression).get.group(1)

  /** Keeps the latest value: Kafka's `reduce((v1, v2) -> v2)`. */
  private object Latest extends Aggregation[String, String] {
    def initial(): String = null
    def add(buffer: String, value: String): String = value
    def merge(buffer: String, other: String): String = other
    def copy(buffer: String): String = buffer
  }

  private def aggregateNode(step: JsonNode): ChainNode[String] = {
    val a = step.get("aggregation")
    val (aggregation, finish): (Aggregation[String, Any], Any => AnyRef) =
      if (a.isTextual) {
        assert(a.asText() == "count", s"unknown aggregation $a")
        (Count.asInstanceOf[Aggregation[String, Any]], (b: Any) => java.lang.Long.valueOf(b.asInstanceOf[Counter].n))
      } else a.get("type").asText() match {
        case "aggregate" =>
          val aggregator = a.get("aggregator").asText()
          assert(aggregator.matches("agg \\+ \"[^\"]*\" \\+ value"), s"unknown aggregator $aggregator")
          val zero = a.get("initializer").asText().stripPrefix("\"").stripSuffix("\"")
          (
            new StringFold(zero, quoted(aggregator)).asInstanceOf[Aggregation[String, Any]],
            (b: Any) => b.asInstanceOf[AnyRef]
          )
        case "reduce" =>
          assert(a.get("reducer").asText() == "(v1, v2) -> v2", s"unknown reducer $a")
          (Latest.asInstanceOf[Aggregation[String, Any]], (b: Any) => b.asInstanceOf[AnyRef])
        case other => fail(s"unknown aggregation type $other")
      }
    val w = step.get("window")
    val valueOf = (r: ChainRecord[String]) => r.value.asInstanceOf[String]
    if (w == null || w.isNull) new KeyAggregateNode[String, String, Any](aggregation, valueOf, (_, _, b) => finish(b))
    else {
      val mode = step.get("emitStrategy").asText() match {
        case "onWindowClose" => EmitMode.OnWindowClose
        case "onWindowUpdate" => EmitMode.OnWindowUpdate
      }
      new WindowedAggregateNode[String, String, Any](
        definition(w),
        mode,
        aggregation,
        valueOf,
        (_, _, _, b, retraction) => if (retraction) null else finish(b)
      )
    }
  }

  private def suppressNode(step: JsonNode, name: String): ChainNode[String] = {
    val mode = step.get("mode").asText()
    val spec = SuppressionSpec(
      name = name,
      timeLimitMs = if (mode == "untilTimeLimit") step.get("timeLimitMs").asLong()
      else step.get("effectiveSuppressDurationMs").asLong(),
      maxRecords = Vectors.longOrMax(step.get("maxRecords")),
      maxBytes = Vectors.longOrMax(step.get("maxBytes")),
      whenFull = if (step.get("bufferFull").asText() == "emitEarly") BufferFullStrategy.EmitEarly
      else BufferFullStrategy.ShutDown,
      dropTombstones = mode == "untilWindowCloses"
    )
    new SuppressNode[String](spec, untilWindowCloses = mode == "untilWindowCloses", kafkaSize)
  }

  /** Kafka's entry size for string keys and values (no topic, no headers); only maxBytes bounds read it. */
  private def kafkaSize(r: ChainRecord[String]): Long = {
    val value = r.value match {
      case null => 0
      case _: java.lang.Long => 8
      case s => s.toString.getBytes("UTF-8").length
    }
    8 + r.key.getBytes("UTF-8").length + value + 8 + 8 + 4
  }

  private def joinNode(step: JsonNode, name: String): ChainNode[String] = {
    assert(step.get("keyType").asText() == "string")
    val table = step.get("table")
    val spec = StreamTableJoinSpec(
      name = name,
      joinType = JoinType.fromName(step.get("joinType").asText()),
      graceMs = Option(step.get("graceMs")).filterNot(_.isNull).map(_.asLong()),
      historyRetentionMs =
        if (table.get("versioned").asBoolean()) Some(table.get("historyRetentionMs").asLong()) else None
    )
    val sep = quoted(step.get("joiner").asText())
    new JoinNode[String](spec, (s, t) => s"$s$sep${if (t == null) "null" else t}", _ => 1L)
  }

  private def chainOf(v: JsonNode, observer: (Int, ChainRecord[String]) => Unit): Chain[String] = {
    val id = v.get("id").asText()
    val steps = Vectors.array(v.get("config").get("chain"))
    val nodes = steps.zipWithIndex.map { case (step, i) =>
      step.get("op").asText() match {
        case "aggregate" => aggregateNode(step)
        case "suppress" => suppressNode(step, s"$id#$i")
        case "join" =>
          assert(i == 0, "a join is only the first step")
          joinNode(step, s"$id#$i")
        case other => fail(s"unknown op $other")
      }
    }
    new Chain[String](nodes.toIndexedSeq, observer)
  }

  private def render(seq: Int, r: ChainRecord[String]): Out =
    Out(
      seq,
      r.key,
      Option(r.window).map(w => (w.start, w.end)),
      if (r.isTombstone) null else r.value.toString,
      r.timestamp
    )

  private final case class Run(outs: Seq[Out], stages: Map[Int, Seq[Out]])

  private def run(v: JsonNode): Run = {
    val stages = mutable.Map.empty[Int, mutable.ArrayBuffer[Out]]
    var seq = -1
    val chain = chainOf(v, (i, r) => stages.getOrElseUpdate(i, mutable.ArrayBuffer.empty) += render(seq, r))
    val tableInput = v.get("config").get("input").get("type").asText() == "table"
    val outs = Seq.newBuilder[Out]
    val sink = new ChainOutput[String] { def forward(r: ChainRecord[String]): Unit = outs += render(seq, r) }
    Vectors.array(v.get("input")).foreach { r =>
      seq = r.get("seq").asInt()
      val record = ChainRecord[String](
        Vectors.textOrNull(r.get("key")),
        null,
        Vectors.textOrNull(r.get("value")),
        r.get("ts").asLong()
      )
      r.get("side").asText() match {
        case "table" if tableInput =>
          // builder.table(...) drops null keys at the source; every other update reaches the first node.
          if (record.key != null) chain.process(record, sink)
        case "table" => chain.table(record, sink)
        case "stream" => chain.process(record, sink)
      }
    }
    Run(outs.result(), stages.map { case (i, b) => i -> b.toSeq }.toMap)
  }

  private def parse(outputs: JsonNode): Seq[Out] = Vectors.array(outputs).map { o =>
    val window =
      if (o.has("window_start")) Some((o.get("window_start").asLong(), o.get("window_end").asLong())) else None
    Out(
      o.get("after_seq").asInt(),
      Vectors.textOrNull(o.get("key")),
      window,
      Vectors.textOrNull(o.get("value")),
      o.get("ts").asLong()
    )
  }

  /** Within a step, outputs of one key keep their order; across keys the order is free (as in the vectors). */
  private def byStepAndKey(outs: Seq[Out]): Map[(Int, String), Seq[Out]] = outs.groupBy(o => (o.afterSeq, o.key))

  private val vectors = Vectors.familyIn(Vectors.chainsDirectory, "chains.json")

  for (v <- vectors) {
    test(v.get("id").asText()) {
      val result = run(v)
      val stages = Vectors.array(v.get("expected_stages")).map { s =>
        val i = s.get("step").asInt()
        val got = result.stages.getOrElse(i, Seq.empty)
        val want = parse(s.get("output"))
        val same = byStepAndKey(got) == byStepAndKey(want)
        (
          same,
          if (same) s"step $i (${s.get("op").asText()}): as Kafka"
          else s"step $i (${s.get("op").asText()}) differs:\n  got  $got\n  want $want"
        )
      }
      val stageReport = stages.map(_._2).mkString("\n")
      assert(byStepAndKey(result.outs) === byStepAndKey(parse(v.get("expected"))), "\n" + stageReport)
      // Each intermediate node forwards what Kafka's did, too (a right result from wrong stages is luck).
      assert(stages.forall(_._1), "\n" + stageReport)
    }
  }

  test("the chain vectors cover every family C1-C5") {
    assert(vectors.map(_.get("chain_family").asText()).toSet === Set("C1", "C2", "C3", "C4", "C5"))
    assert(vectors.size >= 25)
  }
}
