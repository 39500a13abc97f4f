package io.github.sparksuppress.core

import scala.collection.mutable.ArrayBuffer

import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.core.TestAggregations._
import io.github.sparksuppress.core.chain._

/**
 * What one input record makes a node forward reaches the next node one record at a time, in the order Kafka forwards,
 * and each moves that node's stream time before the next arrives. The expected outputs are derived by hand from
 * Kafka's rules (named in each test), not from this code.
 */
class ChainForwardOrderSuite extends AnyFunSuite {

  private def slidingCountThenFinalResults(d: Long): Chain[String] = {
    val count = new WindowedAggregateNode[String, Any, Counter](
      SlidingWindowDefinition(d, graceMs = 0L),
      EmitMode.OnWindowUpdate,
      Count,
      _.value,
      (_, _, _, c, retraction) => if (retraction) null else java.lang.Long.valueOf(c.n)
    )
    // untilWindowCloses below a grace-0 aggregation: buffer time = window end, suppress duration 0.
    val finalResults = new SuppressNode[String](
      SuppressionSpec("final", timeLimitMs = 0L, dropTombstones = true),
      untilWindowCloses = true,
      _ => 1L
    )
    new Chain[String](IndexedSeq(count, finalResults))
  }

  test("sliding count -> untilWindowCloses: an update forwarded first closes a window updated later in the step") {
    val chain = slidingCountThenFinalResults(10)
    val out = ArrayBuffer.empty[(Long, Long, AnyRef, Long)]
    val sink = new ChainOutput[String] {
      def forward(r: ChainRecord[String]): Unit = out += ((r.window.start, r.window.end, r.value, r.timestamp))
    }
    def step(ts: Long): Seq[(Long, Long, AnyRef, Long)] = {
      out.clear()
      chain.process(ChainRecord[String]("k", null, "v", ts), sink)
      out.toList
    }
    def n(x: Long): AnyRef = java.lang.Long.valueOf(x)
    // Each record's left window [ts - 10, ts] ends at the new stream time: with grace 0 it leaves at once.
    assert(step(100) === Seq((90L, 100L, n(1), 100L)))
    assert(step(105) === Seq((95L, 105L, n(2), 105L)))
    assert(step(108) === Seq((98L, 108L, n(3), 108L)))
    // At 111 the aggregation forwards [106,116] first (its stores are read latest start first), which moves the
    // suppress's stream time to 111 and lets out the buffered [101,111] (105 and 108); then 111's left window
    // [101,111] itself arrives, already closed, and leaves too: two results for one window, as Kafka emits them.
    assert(step(111) === Seq((101L, 111L, n(2), 108L), (101L, 111L, n(3), 111L)))
  }
}
