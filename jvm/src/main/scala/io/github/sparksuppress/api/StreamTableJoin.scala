package io.github.sparksuppress.api

import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.sql.DataFrame

import io.github.sparksuppress.core.StreamTableJoinSpec
import io.github.sparksuppress.spark.join.{StreamTableJoinRequest, TableSide}
import io.github.sparksuppress.spark.chain.{ChainDescription, ChainPlan, ChainStep}

/**
 * Kafka's stream-table join (with KIP-923's grace period) as a function on the stream DataFrame:
 * `orders.transform(StreamTableJoin(Seq("customer"), "order_ts", customers, Joined.left().withGracePeriod(g)))`.
 *
 * The output has the stream's columns followed by the table's value columns (all its columns but the key, event-time
 * and tombstone ones) as of each stream record's timestamp. A table value column whose name is also a stream column
 * is an error: rename one side first.
 *
 * @param on
 *   key column(s), with the same names and types on both sides
 * @param streamTimestamp
 *   the stream's event-time column
 * @param table
 *   the table side
 * @param joined
 *   join type, grace period and name
 */
final case class StreamTableJoin(on: Seq[String], streamTimestamp: String, table: ChangelogTable, joined: Joined)
    extends (DataFrame => DataFrame) {

  /** On its own the join is a chain of one; another operator of this library after it extends that chain. */
  override def apply(stream: DataFrame): DataFrame = {
    val step = ChainStep.JoinStep(request)
    ChainPlan.apply(stream, step)(input => ChainPlan.build(ChainDescription(input, Seq(step))))
  }

  /** The operator in the adapter's terms; every rule that needs no DataFrame is decided and checked here. */
  private[sparksuppress] def request: StreamTableJoinRequest = {
    if (table == null) throw new IllegalArgumentException("stream-table join: table must not be null.")
    if (joined == null) throw new IllegalArgumentException(
      "stream-table join: joined must not be null; use Joined.inner() or Joined.left()."
    )
    val name = joined.name.getOrElse(s"join-${StreamTableJoin.unnamed.incrementAndGet()}")
    val s = spec(name)
    val idleMs = joined.idleTimeout.map(Durations.idleTimeout)
    if (idleMs.isDefined && (s.graceMs.isEmpty || !joined.watermarkRelease)) {
      val option =
        Spelling.choose(s"idleTimeout = ${joined.idleTimeout.get}", s"idle_timeout=${joined.idleTimeout.get}")
      val fix = Spelling.choose(
        "give the join a grace period (withGracePeriod) and keep the release on the watermark",
        "pass grace and keep release_on_watermark=True"
      )
      throw new IllegalArgumentException(
        s"stream-table join '$name': $option moves the release of records waiting in the grace buffer on when input " +
          s"stops, but ${if (s.graceMs.isEmpty) "the join has no grace period, so nothing waits"
            else "the release on the watermark is off"}. " +
          s"To use it, $fix; or drop the ${Spelling.choose("idleTimeout", "idle_timeout")} argument."
      )
    }
    StreamTableJoinRequest(
      s,
      joined.name,
      on,
      streamTimestamp,
      TableSide(table.changelog, table.timestamp, table.tombstone, table.initialVersions),
      watermarkRelease = joined.watermarkRelease,
      idleTimeoutMs = idleMs
    )
  }

  /**
   * The join's rules. The core owns the rules tying grace to the table's history; this adds the fix in the user's
   * words.
   */
  private def spec(name: String): StreamTableJoinSpec = {
    val operator = s"stream-table join '$name'"
    val grace = joined.gracePeriod.map(Durations.millis("gracePeriod", _))
    val retention = table.historyRetention.map(Durations.millis("historyRetention", _))
    StreamTableJoinSpec.graceViolation(grace, retention).foreach { rule =>
      val fix = retention match {
        case None =>
          s"The grace period is ${grace.get} ms but the table is not versioned: " + Spelling.choose(
            scala = "make it versioned with a history retention at least as long as the grace period " +
              "(ChangelogTable.versioned(changelog, timestamp, historyRetention)), or drop the grace period.",
            python = "pass history_retention (at least as long as grace), or drop grace."
          )
        case Some(r) =>
          s"The grace period is ${grace.get} ms but the table's history retention is $r ms; raise the history " +
            s"retention to at least ${grace.get} ms or shorten the grace period."
      }
      throw new IllegalArgumentException(s"$operator: $rule $fix")
    }
    StreamTableJoinSpec(name, joined.joinType, grace, retention)
  }
}

object StreamTableJoin {
  private val unnamed = new AtomicInteger()

  def apply(on: String, streamTimestamp: String, table: ChangelogTable, joined: Joined): StreamTableJoin =
    StreamTableJoin(Seq(on), streamTimestamp, table, joined)
}
