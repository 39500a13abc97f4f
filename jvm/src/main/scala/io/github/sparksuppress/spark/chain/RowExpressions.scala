package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.encoders.{ExpressionEncoder, RowEncoder}
import org.apache.spark.sql.catalyst.expressions.{Attribute, BindReferences, Expression, Unevaluable}
import org.apache.spark.sql.types.StructType

/**
 * The user's Spark expressions as a chain step evaluates them on the executors: bound on the driver to the row the
 * step receives, evaluated here by Spark itself on that row. Inside a chain the rows are made on the executor by the
 * node before, as external rows, so each is converted to Spark's internal form once per record.
 */
private[chain] object RowExpressions {

  /**
   * Binds `e` (analysed over `input`, the columns the chain has at that point) to row positions, after checking that
   * it can run inside a chain.
   *
   * @param what
   *   how errors name the expression, e.g. "the condition of where 'value >= 2'"
   */
  def bind(e: Expression, input: Seq[Attribute], what: String, op: String): Expression = {
    if (!e.deterministic) {
      throw new IllegalArgumentException(
        s"$op: $what is not deterministic (${e.sql}). A chain evaluates it again when Spark retries a micro-batch, " +
          "and its state must come out the same: use a deterministic expression."
      )
    }
    val bound = BindReferences.bindReference(e, input)
    bound.find(_.isInstanceOf[Unevaluable]).foreach { u =>
      throw new IllegalArgumentException(
        s"$op: $what uses ${u.prettyName}, which Spark cannot evaluate row by row inside a stateful step (Python " +
          "UDFs and subqueries are such expressions). Compute that column before the first operator, or use a " +
          "built-in or Scala function."
      )
    }
    bound
  }

  /** Converts the external rows of one schema to Spark's internal rows. */
  final class ToInternal(schema: StructType) extends Serializable {
    @transient private lazy val serialize =
      ExpressionEncoder(RowEncoder.encoderFor(schema, lenient = true)).createSerializer()
    def apply(row: Row): InternalRow = serialize(row)
  }

  /** Converts Spark's internal rows of one schema back to external rows. */
  final class ToExternal(schema: StructType) extends Serializable {
    @transient private lazy val deserialize =
      ExpressionEncoder(RowEncoder.encoderFor(schema, lenient = true)).resolveAndBind().createDeserializer()
    def apply(row: InternalRow): Row = deserialize(row)
  }
}
