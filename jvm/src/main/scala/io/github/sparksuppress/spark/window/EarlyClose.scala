package io.github.sparksuppress.spark.window

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, ExprId}
import org.apache.spark.sql.catalyst.plans.logical.{EventTimeWatermark, Join, LogicalPlan, Project, Union}

/**
 * Whether a lone windowed aggregation may close windows in the micro-batch that read their closing record, rather
 * than one batch later when Spark's watermark catches up (docs/emit.md, "Closing windows in the batch that closes
 * them").
 *
 * After a key's rows, its stream time moves to `horizon - delay`, the horizon being the largest event time of the
 * input partitions its rows came from ([[ShuffleRows]]). Spark's next watermark is `max(watermark, M - delay)`, `M`
 * the largest event time its watermark node saw in the batch, so the move closes only what the next batch would close
 * before reading any of its records. That holds when every row the aggregation reads passed the query's only
 * watermark node with the value it aggregates by: the aggregation's event-time column is that node's column, carried
 * through projections, filters and the stream side of joins, never through a union (whose other inputs bypass the
 * node) or a computed column. Otherwise, or with [[Conf]] set to false, windows close at the watermark as before.
 */
private[sparksuppress] object EarlyClose {

  /** Internal session setting: "false" turns the rule off (tests compare both). */
  val Conf = "spark.sparksuppress.window.earlyClose"

  /** The watermark delay in ms when the rule holds for the event-time column at `timestamp` of `df`, else None. */
  def delayMs(df: DataFrame, timestamp: Int): Option[Long] = {
    if (df.sparkSession.conf.getOption(Conf).exists(_.equalsIgnoreCase("false"))) return None
    val plan = df.queryExecution.analyzed
    if (plan.collect { case w: EventTimeWatermark => w }.size != 1) None
    else watermarkOf(plan, plan.output(timestamp).exprId)
  }

  /** The delay of the watermark node whose event-time column `id` is, followed down from `plan`. */
  private def watermarkOf(plan: LogicalPlan, id: ExprId): Option[Long] = plan match {
    case w: EventTimeWatermark if w.eventTime.exprId == id =>
      w.output.find(_.exprId == id).map(_.metadata).filter(_.contains(EventTimeWatermark.delayKey))
        .map(_.getLong(EventTimeWatermark.delayKey))
    case _: Union => None
    case p: Project =>
      p.projectList.find(_.exprId == id).flatMap {
        case a: Attribute => watermarkOf(p.child, a.exprId)
        case Alias(a: Attribute, _) => watermarkOf(p.child, a.exprId)
        case _ => None // computed here: not the value the watermark node saw
      }
    case j: Join =>
      Seq(j.left, j.right).filter(_.outputSet.exists(_.exprId == id)) match {
        case Seq(side) if side.isStreaming => watermarkOf(side, id)
        case _ => None
      }
    case p if p.children.size == 1 && p.children.head.outputSet.exists(_.exprId == id) =>
      watermarkOf(p.children.head, id)
    case _ => None
  }
}
