package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.spark.common.InputColumns
import io.github.sparksuppress.spark.join.{JoinColumns, StreamTableJoinRequest}

/** A join's table side as the fused plan reads it: the changelog and its columns, by their resolved names. */
private[chain] final case class ChainTableSide(
    changelog: DataFrame,
    keys: Seq[String],
    timestamp: String,
    tombstone: Option[String],
    valueSchema: StructType
)

/** Checks a stream-table join that starts a chain and resolves its node and table side. */
private[chain] object ChainJoin {

  def resolve(j: StreamTableJoinRequest, streamSchema: StructType, op: String): (JoinNodeSpec, ChainTableSide) = {
    if (j.table.initialVersions.isDefined) {
      throw new IllegalArgumentException(
        s"$op: initialVersions are not supported when the join starts a chain yet; run the join in a query of its " +
          "own, or feed the initial versions through the changelog."
      )
    }
    val table = j.table.changelog
    InputColumns.requireStreaming(table, "the table changelog", op)
    InputColumns.requireNoUpstreamStatefulOperator(table, op)
    val columns = JoinColumns.resolve(j, streamSchema, table.schema, op)
    val valueSchema = columns.tableValueSchema
    // The API has checked the grace rules; the node only renames the spec after the chain step.
    val spec = j.spec.copy(name = op)
    val node = JoinNodeSpec(op, spec, streamSchema, valueSchema, columns.streamKeys, columns.streamValues)
    val t = columns.tableColumns
    (node, ChainTableSide(table, t.keys, t.timestamp, t.tombstone, valueSchema))
  }
}
