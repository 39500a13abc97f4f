package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.trees.TreeNodeTag

/**
 * Which DataFrames are outputs of this library's chainable operators, and how they were made, so that an operator
 * applied to such an output extends the chain (rebuilt from the original input as one stateful step) instead of
 * stacking a second stateful operator, which Spark cannot run in one query.
 *
 * The description travels with the output itself, as a tag on the root of its logical plan: it lives exactly as
 * long as that plan, and only that plan carries it. No driver-wide table is consulted, so two outputs whose plans
 * merely look alike are never taken for one another.
 */
object ChainRegistry {
  private val Description = TreeNodeTag[ChainDescription]("spark_suppress.chain")

  def register(output: DataFrame, description: ChainDescription): DataFrame = {
    output.queryExecution.logical.setTagValue(Description, description)
    output
  }

  def lookup(df: DataFrame): Option[ChainDescription] =
    if (df == null) None else df.queryExecution.logical.getTagValue(Description)
}
