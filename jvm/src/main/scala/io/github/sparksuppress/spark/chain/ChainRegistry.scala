package io.github.sparksuppress.spark.chain

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan, Project, SubqueryAlias}
import org.apache.spark.sql.catalyst.trees.TreeNodeTag

/**
 * Which DataFrames are outputs of this library's chainable operators, and how they were made, so that an operator
 * applied to such an output extends the chain (rebuilt from the original input as one stateful step) instead of
 * stacking a second stateful operator, which Spark cannot run in one query.
 *
 * The description travels with the output itself, as a tag on the root of its logical plan: it lives exactly as long
 * as that plan, and only that plan carries it. No driver-wide table is consulted, so two outputs whose plans merely
 * look alike are never taken for one another. Spark copies tags when it rewrites a node, and a `where` or `select` on
 * the output keeps the tagged plan as its child: those stateless steps are read back from the plan.
 */
object ChainRegistry {
  private val Description = TreeNodeTag[ChainDescription]("spark_suppress.chain")

  /** What an operator's input is, seen from the chains. */
  sealed trait Found

  /** The input extends a chain: the chain's steps, then the `where`/`select` steps applied since. */
  final case class Extends(description: ChainDescription) extends Found

  /** A chain's output lies under a step that cannot join a chain (named as Spark names the plan node). */
  final case class Under(node: String, description: ChainDescription) extends Found

  /**
   * No chain: `where`/`select` steps (innermost first) on `base`, a plan of the user's own. Before a suppress of a
   * table's changelog they are Kafka's `KTable.filter`/`mapValues` on the source table and run inside the operator.
   */
  final case class OnInput(base: LogicalPlan, steps: Seq[ChainStep]) extends Found
  case object NotAChain extends Found

  def register(output: DataFrame, description: ChainDescription): DataFrame = {
    // The analysed plan is what the next Dataset built on this one takes as its child.
    output.queryExecution.logical.setTagValue(Description, description)
    output.queryExecution.analyzed.setTagValue(Description, description)
    output
  }

  def lookup(df: DataFrame): Found =
    if (df == null) NotAChain
    else df.queryExecution.logical.getTagValue(Description) match {
      case Some(d) => Extends(d)
      case None => through(df.queryExecution.analyzed)
    }

  private def through(root: LogicalPlan): Found = {
    val stateless = ArrayBuffer.empty[ChainStep]
    var plan = root
    while (true) {
      plan.getTagValue(Description) match {
        case Some(d) => return Extends(d.copy(steps = d.steps ++ stateless.reverse))
        case None =>
      }
      plan match {
        case Filter(condition, child) => stateless += ChainStep.FilterStep(condition, child.output); plan = child
        case Project(columns, child) => stateless += ChainStep.ProjectStep(columns, child.output); plan = child
        case SubqueryAlias(_, child) => plan = child
        case other =>
          return other.collectFirst(Function.unlift((p: LogicalPlan) => p.getTagValue(Description)))
            .map(Under(other.nodeName, _))
            .getOrElse(if (stateless.isEmpty) NotAChain else OnInput(other, stateless.reverse.toSeq))
      }
    }
    NotAChain
  }
}
