package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * Remembers, on the driver, which DataFrames are outputs of this library's chainable operators and how they were
 * made, so that an operator applied to such an output extends the chain (rebuilt from the original input as one
 * stateful step) instead of stacking a second stateful operator, which Spark cannot run in one query.
 *
 * Keys are the outputs' logical plans, held weakly: a description lives as long as its output DataFrame.
 */
object ChainRegistry {
  private val outputs = new java.util.WeakHashMap[LogicalPlan, ChainDescription]()

  def register(output: DataFrame, description: ChainDescription): DataFrame = {
    outputs.synchronized(outputs.put(output.queryExecution.logical, description))
    output
  }

  def lookup(df: DataFrame): Option[ChainDescription] =
    if (df == null) None else outputs.synchronized(Option(outputs.get(df.queryExecution.logical)))
}
