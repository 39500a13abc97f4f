package io.github.sparksuppress.reliability

import io.github.sparksuppress.spark.SparkSessionSuite
import io.github.sparksuppress.spark.suppress.SuppressRules

/**
 * Restart equivalence: every operator under test runs a generated stream once without interruption, then again with
 * the query stopped at 10+ points and restarted from the same checkpoint (state read back from the files). The output
 * the file sink committed, batch by batch, must be the same. Three kinds of stop alternate:
 *
 *   - after a batch completed;
 *   - after a batch completed but before the checkpoint recorded it (the batch runs again on restart and the
 *     exactly-once file sink must not write it twice, nor the operator buffer or emit anything twice);
 *   - while a batch may be running (the stop interrupts it wherever it is).
 *
 * Stop points are steps after which the operator held records in its buffer, so that each restart must bring them
 * back. One suite per state store provider.
 */
abstract class RestartEquivalenceSuite(provider: Option[String]) extends SparkSessionSuite {
  // Checkpoints written, stopped and read back as users' queries do (Spark's default file manager).
  override protected def quickCheckpoints: Boolean = false

  import RestartEquivalenceSuite._

  override protected def extraConf: Map[String, String] =
    FileSinkRun.conf ++ provider.map("spark.sql.streaming.stateStore.providerClass" -> _)

  /** The operators checked at the quick level; the full level checks all of them. */
  protected def quickOperators: Seq[OperatorUnderTest]
  private val operators = ReliabilityLevel.pick(quickOperators, OperatorsUnderTest.all)
  // The full level adds every operator on the provider, at about the quick level's size: 30 steps and 12 stops
  // repeated the same cases (each stop kind 3-4 times, late and out-of-order records, windows closing between stops)
  // at nearly twice the cost of 16 and 10 (docs/reliability.md, time of make reliability).
  private val steps = ReliabilityLevel.pick(14, 16)
  private val stops = 10

  for (op <- operators) {
    test(s"$op: stopped and restarted at $stops+ points, the file sink holds exactly the uninterrupted output" +
      (if (op.sameBatchesAfterRestart) "" else " (its rows, not their micro-batches)")) {
      val stream = op.generate(seed = op.name.hashCode.toLong, steps)

      val began = System.nanoTime()
      val reference = new FileSinkRun(spark, op.inputs, tempDir("rel-reference"))
      reference.start(op.build(reference.inputs))
      val bufferedAfter = stream.map { s => reference.feed(s); op.buffered(reference.running) }
      reference.stop()
      val expected = FileSinkRun.concatenated(reference.outputByBatch())
      info(f"uninterrupted run: ${(System.nanoTime() - began) / 1e9}%.1f s")

      // Steps after which records sat in the buffer, spread over the stream; the last step is never one.
      val candidates = bufferedAfter.indices.filter(i => bufferedAfter(i) > 0 && i < stream.length - 1)
      assert(candidates.length >= stops, s"the generated stream buffers records after only ${candidates.length} steps")
      val points = (0 until stops).map(j => candidates(j * candidates.length / stops)).zipWithIndex
        .map { case (i, j) => i -> StopKind.all(j % StopKind.all.length) }.toMap

      val restarted = new FileSinkRun(spark, op.inputs, tempDir("rel-restarted"))
      restarted.start(op.build(restarted.inputs))
      stream.zipWithIndex.foreach { case (step, i) =>
        points.get(i) match {
          case Some(StopKind.WhileRunning) =>
            restarted.add(step)
            restarted.stop()
          case Some(kind) =>
            restarted.feed(step)
            restarted.stop()
            if (kind == StopKind.BeforeCommit) restarted.forgetLastCommit()
          case None => restarted.feed(step)
        }
        if (points.contains(i)) {
          restarted.start(op.build(restarted.inputs))
          restarted.drain()
        }
      }
      restarted.stop()
      val actual = FileSinkRun.concatenated(restarted.outputByBatch())

      assert(expected.flatten.nonEmpty)
      val where = s"stops at ${points.toSeq.sortBy(_._1).mkString(", ")}"
      if (op.sameBatchesAfterRestart) assert(actual === expected, where)
      else assert(actual.flatten.sorted === expected.flatten.sorted, s"every row exactly once; $where")
    }
  }
}

object RestartEquivalenceSuite {
  sealed trait StopKind
  object StopKind {
    case object AfterBatch extends StopKind
    case object BeforeCommit extends StopKind
    case object WhileRunning extends StopKind
    val all: Seq[StopKind] = Seq(AfterBatch, BeforeCommit, WhileRunning)
  }
}

class RestartEquivalenceHdfsSuite extends RestartEquivalenceSuite(None) {
  protected def quickOperators: Seq[OperatorUnderTest] =
    Seq(
      OperatorsUnderTest.suppressTimeLimit,
      OperatorsUnderTest.aggregateHoppingOnClose,
      OperatorsUnderTest.chainJoinAggregateSuppress,
      OperatorsUnderTest.aggregateHoppingLateEmit,
      OperatorsUnderTest.suppressWindowClosesLateEmit,
      OperatorsUnderTest.joinWatermarkRelease,
      OperatorsUnderTest.aggregateHoppingIdle
    )
}

class RestartEquivalenceRocksDBSuite extends RestartEquivalenceSuite(Some(SuppressRules.RocksDBProvider)) {
  protected def quickOperators: Seq[OperatorUnderTest] =
    Seq(
      OperatorsUnderTest.joinVersionedGrace,
      OperatorsUnderTest.chainJoinAggregateSuppress,
      OperatorsUnderTest.suppressWindowClosesIdle
    )
}
