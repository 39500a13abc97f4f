package io.github.sparksuppress.shims

import org.apache.spark.sql.catalyst.expressions.EvalMode
import org.apache.spark.sql.catalyst.expressions.aggregate.Sum

// Spark 4.1 moved Sum's ANSI mode into a NumericEvalContext; 3.5 and 4.0 hold it directly (sum.evalMode).
private[sparksuppress] object SumEvalMode {
  def of(sum: Sum): EvalMode.Value = sum.evalContext.evalMode
}
