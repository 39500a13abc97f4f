package io.github.sparksuppress.core

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.testkit.Vectors

/**
 * Runs the KIP-328 eviction examples (`buffer_examples.json`, both buffer-time rules) and the processor-level
 * suppress vectors through the pure core, with Kafka's stream time (largest timestamp seen, starting at -1).
 */
class BufferExamplesSuite extends AnyFunSuite {

  private case class Out(afterSeq: Int, key: String, value: String, ts: Long)

  /** Kafka's default entry size for a string key and a value with empty topic and no headers. */
  private def kafkaSize(key: String, value: JsonNode): Long = {
    val valueBytes =
      if (value == null || value.isNull) 0
      else if (value.isIntegralNumber) 8
      else value.asText().getBytes("UTF-8").length
    8 + key.getBytes("UTF-8").length + valueBytes + 8 + 8 + 4
  }

  private def windowedKey(r: JsonNode): String = {
    val k = r.get("key").asText()
    if (r.has("window_start")) s"$k@${r.get("window_start").asLong()}/${r.get("window_end").asLong()}" else k
  }

  private var lastMetrics: SuppressionMetrics = _

  private def run(v: JsonNode): (Seq[Out], Option[Throwable]) = {
    val cfg = v.get("config")
    val mode = cfg.get("mode").asText()
    val full = cfg.get("bufferFull").asText() match {
      case "emitEarly" => BufferFullStrategy.EmitEarly
      case _ => BufferFullStrategy.ShutDown
    }
    val timeLimit =
      if (mode == "untilTimeLimit") cfg.get("timeLimitMs").asLong() else cfg.get("effectiveSuppressDurationMs").asLong()
    val rule =
      Option(cfg.get("bufferTime")).map(n => BufferTimeRule.fromName(n.asText())).getOrElse(BufferTimeRule.First)
    val spec = SuppressionSpec(
      name = v.get("id").asText(),
      timeLimitMs = timeLimit,
      maxRecords = Vectors.longOrMax(cfg.get("maxRecords")),
      maxBytes = Vectors.longOrMax(cfg.get("maxBytes")),
      whenFull = full,
      dropTombstones = mode == "untilWindowCloses",
      bufferTimeRule = rule
    )
    val valueLength = Option(cfg.get("sizeModel")).exists(_.asText() == "value_length")
    val suppressor = new Suppressor[String, String](spec, _ == null)
    suppressor.sample() // Kafka samples the buffer once when it is opened
    lastMetrics = suppressor.metrics
    val outs = Seq.newBuilder[Out]
    var st = -1L
    var error: Option[Throwable] = None
    Vectors.array(v.get("input")).foreach { r =>
      if (error.isEmpty) {
        val seq = r.get("seq").asInt()
        val key = windowedKey(r)
        val value = Vectors.textOrNull(r.get("value"))
        val ts = r.get("ts").asLong()
        val bufferTime = if (mode == "untilWindowCloses") r.get("window_end").asLong() else ts
        val size = if (valueLength) Option(value).map(_.length.toLong).getOrElse(0L)
        else kafkaSize(r.get("key").asText(), r.get("value"))
        st = math.max(st, ts)
        val emitter = new SuppressionEmitter[String, String] {
          def emit(rec: BufferedRecord[String, String]): Unit = outs += Out(seq, rec.key, rec.value, rec.timestamp)
        }
        try suppressor.put(key, value, ts, bufferTime, size, st, emitter)
        catch { case e: BufferFullException => error = Some(e) }
      }
    }
    (outs.result(), error)
  }

  private def expected(v: JsonNode): Seq[Out] = Vectors.array(v.get("expected")).map { o =>
    Out(o.get("after_seq").asInt(), windowedKey(o), Vectors.textOrNull(o.get("value")), o.get("ts").asLong())
  }

  for (v <- Vectors.family("buffer_examples.json")) {
    test(v.get("id").asText()) {
      val (outs, error) = run(v)
      assert(error.isEmpty)
      assert(outs === expected(v), v.get("notes").asText())
    }
  }

  // Processor-level suppress vectors: every input reaches the suppressor directly (no upstream aggregation).
  private val processorLevel =
    Seq("suppress_time_limit.json", "suppress_buffer_limits.json", "suppress_final_results.json")
      .flatMap(Vectors.family)
      .filter(v => v.get("config").has("mode") && !v.has("optional"))
      .filter(v => !v.has("kafka_entry_sizes_bytes") || v.get("kafka_entry_sizes_bytes").isArray)

  for (v <- processorLevel) {
    test(s"core: ${v.get("id").asText()}") {
      val (outs, error) = run(v)
      assert(outs === expected(v))
      if (v.has("expected_error")) {
        assert(
          error.exists(_.getMessage.contains("buffer exceeded its max capacity")),
          s"expected ${v.get("expected_error")}"
        )
      } else assert(error.isEmpty, error.map(_.getMessage).getOrElse(""))
      // Metrics asserted after the last input (the core cannot be read between steps from here).
      Vectors.array(v.get("expected_metrics")).lastOption.foreach { m =>
        val ms = lastMetrics
        assert(ms.emitTotal.toDouble === m.get("suppression-emit-total").asDouble())
        assert(ms.sizeMax.toDouble === m.get("suppression-buffer-size-max").asDouble())
        assert(ms.sizeAvg === m.get("suppression-buffer-size-avg").asDouble())
        assert(ms.countMax.toDouble === m.get("suppression-buffer-count-max").asDouble())
        assert(ms.countAvg === m.get("suppression-buffer-count-avg").asDouble())
      }
    }
  }
}
