package io.github.sparksuppress.shims

import org.apache.spark.sql.catalyst.expressions.EvalMode
import org.apache.spark.sql.catalyst.expressions.aggregate.Sum

// Spark 4.1 moved Sum's ANSI mode into a NumericEvalContext (sum.evalContext.evalMode); 3.5 and 4.0 hold it directly.
private[sparksuppress] object SumEvalMode {
  def of(sum: Sum): EvalMode.Value = sum.evalMode
}
