package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.types.{BooleanType, StructField, StructType}

import io.github.sparksuppress.spark.common.{ColumnNames, InputColumns}

/**
 * Resolves the stateless steps a user put between two of this library's operators, with the semantics Kafka gives the
 * same DSL calls: `where` is `KStream.filter` on a stream (a join's output) and `KTable.filter` on a table (an
 * aggregation's or a suppress's output); `select`/`withColumn` is `mapValues`, so the columns the chain keys, orders
 * and windows by must pass through unchanged.
 */
private[chain] object ChainStateless {

  def filter(
      f: ChainStep.FilterStep,
      later: Seq[ChainStep],
      chainKey: Seq[String],
      r: ChainResolution,
      op: String
  ): NodeSpec = {
    requireColumns(f.input, r.schema, op)
    val condition = RowExpressions.bind(f.condition, f.input, "its condition", op)
    if (!r.table) StreamFilterNodeSpec(op, condition, r.schema)
    else {
      // Kafka's suppress asks its parent for old values; an aggregation reads the table's toStream() without them.
      val withOldValues = later.find(ChainStep.isOperator).exists(_.isInstanceOf[ChainStep.SuppressStep])
      // A tombstone needs a column to show in the output, unless an aggregation or a final-results suppress, which
      // consume tombstones, comes later.
      val reachesOutput = !later.exists {
        case _: ChainStep.WindowedAggregateStep | _: ChainStep.KeyAggregateStep => true
        case ChainStep.SuppressStep(s) => s.untilWindowCloses
        case _ => false
      }
      val input = r.schema
      val appends = reachesOutput && r.flag.isEmpty
      if (appends) {
        val flag = ColumnNames.Retraction
        if (input.fieldNames.exists(_.equalsIgnoreCase(flag))) {
          throw new IllegalArgumentException(
            s"$op: a filter on a table forwards a tombstone when a key's value stops passing, shown in a boolean " +
              s"column '$flag', but its input already has a column of that name. Rename that column before the filter."
          )
        }
        r.schema = input.add(StructField(flag, BooleanType, nullable = true))
        r.flag = Some(flag)
      }
      val kept = (chainKey ++ r.windowColumns :+ r.timestamp).map(InputColumns.index(input, _, "column", op)).toArray
      val flagAt = r.flag.map(InputColumns.index(r.schema, _, "column", op))
      TableFilterNodeSpec(op, condition, input, r.schema, kept, flagAt, appends, withOldValues, r.closedAfterMs)
    }
  }

  def project(p: ChainStep.ProjectStep, chainKey: Seq[String], r: ChainResolution, op: String): NodeSpec = {
    requireColumns(p.input, r.schema, op)
    val roles = chainKey.map(_ -> "the key") ++ r.windowColumns.map(_ -> "the window") ++
      Seq(r.timestamp -> "the event time") ++ r.flag.map(_ -> "the deletion flag")
    roles.foreach { case (name, role) =>
      val source = p.input.find(_.name.equalsIgnoreCase(name)).get
      val passes = p.columns.exists {
        case a: Attribute => a.exprId == source.exprId && a.name.equalsIgnoreCase(name)
        case _ => false
      }
      if (!passes) {
        val replaced = p.columns.exists(_.name.equalsIgnoreCase(name))
        val rekey = if (role == "the key") {
          " Re-keying between two operators needs a second query: write this result to a sink and re-key it in a " +
            "query of its own (Kafka needs a repartition topic there too)."
        } else ""
        throw new IllegalArgumentException(
          s"$op: it ${if (replaced) "replaces" else "drops"} column '$name', $role of the rows between this " +
            s"library's operators; a select or withColumn there may only change the other columns (Kafka's " +
            s"mapValues). Keep '$name' as it is.$rekey"
        )
      }
    }
    val columns = p.columns.map(c => RowExpressions.bind(c, p.input, s"column '${c.name}'", op)).toArray
    val input = r.schema
    r.schema = StructType(p.columns.map(c => StructField(c.name, c.dataType, c.nullable, c.metadata)))
    MapValuesNodeSpec(op, columns, input, r.schema)
  }

  /** The plan the step was applied to produced the columns the chain has at this point. */
  private def requireColumns(input: Seq[Attribute], schema: StructType, op: String): Unit = {
    val same = input.length == schema.length && input.zip(schema.fields).forall { case (a, f) =>
      a.name == f.name && a.dataType == f.dataType
    }
    if (!same) {
      throw new IllegalStateException(
        s"$op: the columns it was applied to (${input.map(_.name).mkString(", ")}) are not those the chain " +
          s"produces there (${schema.fieldNames.mkString(", ")})."
      )
    }
  }
}
