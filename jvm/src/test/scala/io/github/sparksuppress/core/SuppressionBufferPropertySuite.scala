package io.github.sparksuppress.core

import scala.collection.mutable

import org.scalatest.funsuite.AnyFunSuite

/**
 * Random operation sequences against a naive model of Kafka's suppress algorithm: a plain map whose eviction order is
 * found by sorting all entries every time. Seeded, so a failure names the seed that reproduces it.
 */
class SuppressionBufferPropertySuite extends AnyFunSuite {

  private final case class ModelEntry(key: String, value: String, ts: Long, bufferTime: Long, size: Long)
  private final case class Emitted(key: String, value: String, ts: Long)

  /** The reference: obviously correct, quadratic. */
  private final class Model(spec: SuppressionSpec) {
    val entries = mutable.LinkedHashMap.empty[String, ModelEntry]
    def oldest: ModelEntry = entries.values.toSeq.sortBy(e => (e.bufferTime, e.key)).head
    def bytes: Long = entries.values.map(_.size).sum
    def over: Boolean = entries.size > spec.maxRecords || bytes > spec.maxBytes
    def put(key: String, value: String, ts: Long, size: Long, st: Long, out: mutable.Buffer[Emitted]): Unit = {
      val bt = entries.get(key) match {
        case Some(e) if spec.bufferTimeRule == BufferTimeRule.First => e.bufferTime
        case _ => ts
      }
      entries(key) = ModelEntry(key, value, ts, bt, size)
      val expiry = TimeMath.minus(st, spec.timeLimitMs)
      while (entries.nonEmpty && oldest.bufferTime <= expiry) evict(out)
      if (over && spec.whenFull == BufferFullStrategy.EmitEarly) while (over) evict(out)
    }
    private def evict(out: mutable.Buffer[Emitted]): Unit = {
      val e = oldest
      entries.remove(e.key)
      if (!(spec.dropTombstones && e.value == null)) out += Emitted(e.key, e.value, e.ts)
    }
  }

  private def randomSpec(rnd: java.util.Random): SuppressionSpec = {
    val bounded = rnd.nextInt(3)
    SuppressionSpec(
      name = "prop",
      timeLimitMs = if (rnd.nextInt(4) == 0) Long.MaxValue else rnd.nextInt(20).toLong,
      maxRecords = if (bounded == 1) rnd.nextInt(6).toLong else Long.MaxValue,
      maxBytes = if (bounded == 2) rnd.nextInt(12).toLong else Long.MaxValue,
      whenFull = BufferFullStrategy.EmitEarly,
      dropTombstones = rnd.nextBoolean(),
      bufferTimeRule = if (rnd.nextBoolean()) BufferTimeRule.First else BufferTimeRule.Latest
    )
  }

  test("the buffer agrees with the naive model over thousands of random sequences") {
    for (seed <- 1 to 3000) {
      val rnd = new java.util.Random(seed)
      val spec = randomSpec(rnd)
      val model = new Model(spec)
      var suppressor = new Suppressor[String, String](spec, _ == null)
      val got = mutable.ArrayBuffer.empty[Emitted]
      val want = mutable.ArrayBuffer.empty[Emitted]
      val emitter = new SuppressionEmitter[String, String] {
        def emit(r: BufferedRecord[String, String]): Unit = got += Emitted(r.key, r.value, r.timestamp)
      }
      val keySpace = 1 + rnd.nextInt(8)
      var st = -1L
      val lastPut = mutable.Map.empty[String, (String, Long)]
      for (step <- 0 until 1 + rnd.nextInt(60)) {
        val key = ('a' + rnd.nextInt(keySpace)).toChar.toString
        val value = if (rnd.nextInt(6) == 0) null else "v" * (1 + rnd.nextInt(4)) + step
        val ts = rnd.nextInt(40).toLong
        val size = if (value == null) 0L else value.length.toLong
        st = math.max(st, ts)
        suppressor.put(key, value, ts, ts, size, st, emitter)
        model.put(key, value, ts, size, st, want)
        lastPut(key) = (value, ts)
        withClue(s"seed $seed step $step spec $spec") {
          assert(got === want)
          assert(suppressor.buffer.numRecords === model.entries.size)
          assert(suppressor.buffer.sizeBytes === model.bytes)
          if (spec.isBounded) assert(!suppressor.overCapacity, "bounds must hold after every step")
          assert(suppressor.buffer.minBufferTime ===
            (if (model.entries.isEmpty) Long.MaxValue else model.oldest.bufferTime))
        }
        // Now and then, store and restore the buffer, as the Spark adapter does between micro-batches.
        if (rnd.nextInt(5) == 0) {
          val bytes = SuppressionBufferCodec.toBytes(suppressor.buffer)
          val restored = new Suppressor[String, String](spec, _ == null)
          SuppressionBufferCodec.read(new ByteReader(bytes), restored.buffer)
          suppressor = restored
        }
      }
      // Nothing is lost: every key's latest value is still buffered, or was the key's last emission.
      withClue(s"seed $seed") {
        for ((key, (value, ts)) <- lastPut) {
          suppressor.buffer.get(key) match {
            case Some(r) => assert((r.value, r.timestamp) === ((value, ts)))
            case None =>
              if (!(spec.dropTombstones && value == null)) {
                assert(got.filter(_.key == key).lastOption === Some(Emitted(key, value, ts)))
              }
          }
        }
      }
    }
  }

  test("per-key order is kept: a key's emissions follow its puts") {
    for (seed <- 1 to 500) {
      val rnd = new java.util.Random(seed)
      val spec = randomSpec(rnd).copy(dropTombstones = false)
      val suppressor = new Suppressor[String, String](spec, _ == null)
      val putOrder = mutable.Map.empty[String, mutable.ArrayBuffer[String]].withDefault(_ => mutable.ArrayBuffer())
      val emitted = mutable.Map.empty[String, mutable.ArrayBuffer[String]].withDefault(_ => mutable.ArrayBuffer())
      val emitter = new SuppressionEmitter[String, String] {
        def emit(r: BufferedRecord[String, String]): Unit = emitted(r.key) = emitted(r.key) += r.value
      }
      var st = -1L
      for (step <- 0 until 80) {
        val key = ('a' + rnd.nextInt(4)).toChar.toString
        val value = s"$key$step"
        val ts = rnd.nextInt(30).toLong
        st = math.max(st, ts)
        putOrder(key) = putOrder(key) += value
        suppressor.put(key, value, ts, ts, 2, st, emitter)
      }
      for ((key, values) <- emitted) {
        val positions = values.map(putOrder(key).indexOf(_))
        assert(positions === positions.sorted, s"seed $seed key $key")
      }
    }
  }

  test("crowded buffer times (small sorted buckets and large heap ones) keep the order through removals and re-times") {
    for (seed <- 1 to 300) {
      val rnd = new java.util.Random(seed)
      val rule = if (rnd.nextBoolean()) BufferTimeRule.First else BufferTimeRule.Latest
      val buffer = new SuppressionBuffer[String, Int](rule)
      val model = mutable.Map.empty[String, (Long, Int)] // key -> (buffer time, value)
      val keySpace = 1 + rnd.nextInt(120) // up to far more keys per buffer time than a bucket sorts
      val times = 1 + rnd.nextInt(4)
      def expectedOldest: Option[String] = model.toSeq.sortBy { case (k, (t, _)) => (t, k) }.headOption.map(_._1)
      for (step <- 0 until 600) {
        val key = f"k${rnd.nextInt(keySpace)}%03d"
        rnd.nextInt(10) match {
          case 0 | 1 =>
            val got = if (buffer.isEmpty) None else Some(buffer.evictOldest().key)
            val want = expectedOldest
            want.foreach(model.remove)
            assert(got === want, s"seed $seed step $step: evicted")
          case 2 =>
            assert(buffer.remove(key).map(_.value) === model.remove(key).map(_._2), s"seed $seed step $step: removed")
          case _ =>
            val time = rnd.nextInt(times).toLong
            val kept = model.get(key).filter(_ => rule == BufferTimeRule.First).map(_._1)
            model(key) = (kept.getOrElse(time), step)
            buffer.put(key, step, time, time, 1)
        }
        assert(buffer.numRecords === model.size, s"seed $seed step $step: count")
        assert(Option(buffer.oldest).map(_.key) === expectedOldest, s"seed $seed step $step: oldest")
      }
      val drained = Iterator.continually(buffer).takeWhile(_.nonEmpty).map(_.evictOldest().key).toList
      assert(drained === model.toSeq.sortBy { case (k, (t, _)) => (t, k) }.map(_._1), s"seed $seed: drained")
    }
  }

  test("ties in buffer time go to the smaller key bytes, unsigned (Kafka's order)") {
    val buffer = new SuppressionBuffer[Array[Byte], String](BufferTimeRule.First)
    buffer.put(Array[Byte](-1), "high", 0, 5, 1) // 0xFF sorts after 0x01 unsigned
    buffer.put(Array[Byte](1, 2), "long", 0, 5, 1)
    buffer.put(Array[Byte](1), "prefix", 0, 5, 1) // a shorter prefix sorts first
    buffer.put(Array[Byte](0), "later", 0, 6, 1)
    val order = Iterator.continually(buffer).takeWhile(_.nonEmpty).map(_.evictOldest().value).toList
    assert(order === List("prefix", "long", "high", "later"))
  }

  test("first keeps the first buffer time; latest moves it in both directions") {
    val first = new SuppressionBuffer[String, String](BufferTimeRule.First)
    first.put("a", "1", 10, 10, 1)
    first.put("a", "2", 3, 3, 1)
    assert(first.minBufferTime === 10)
    assert(first.get("a").map(r => (r.value, r.timestamp)) === Some(("2", 3L)))

    val latest = new SuppressionBuffer[String, String](BufferTimeRule.Latest)
    latest.put("a", "1", 10, 10, 1)
    latest.put("b", "1", 7, 7, 1)
    latest.put("a", "2", 3, 3, 1)
    assert(latest.oldest.key === "a")
    latest.put("a", "3", 30, 30, 1)
    assert(latest.oldest.key === "b")
  }

  test("a shut-down buffer names the operator, the bound and the counts") {
    val s = new Suppressor[String, String](
      SuppressionSpec("alerts", Long.MaxValue, maxRecords = 1, whenFull = BufferFullStrategy.ShutDown),
      _ == null
    )
    val none = new SuppressionEmitter[String, String] { def emit(r: BufferedRecord[String, String]): Unit = fail() }
    s.put("a", "x", 0, 0, 3, 0, none)
    val e = intercept[BufferFullException](s.put("b", "y", 1, 1, 4, 1, none))
    assert(e.getMessage.startsWith("alerts buffer exceeded its max capacity. Currently [2/1] records and [7/"))
  }

  test("saturating time arithmetic never wraps") {
    assert(TimeMath.minus(-1, Long.MaxValue) === Long.MinValue)
    assert(TimeMath.minus(5, Long.MaxValue) === 5 - Long.MaxValue)
    assert(TimeMath.minus(Long.MinValue, 1) === Long.MinValue)
    assert(TimeMath.plus(Long.MaxValue - 1, 5) === Long.MaxValue)
    assert(TimeMath.plus(10, 5) === 15)
  }

  test("a stored buffer with another format version is refused with a clear message") {
    val bytes = SuppressionBufferCodec.toBytes(new SuppressionBuffer[String, String](BufferTimeRule.First))
    bytes(0) = 9
    val e = intercept[IllegalStateException](
      SuppressionBufferCodec.read(new ByteReader(bytes), new SuppressionBuffer[String, String](BufferTimeRule.First))
    )
    assert(e.getMessage.contains("format version 9"))
  }
}
