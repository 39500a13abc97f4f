package io.github.sparksuppress.spark.chain

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.types.StructType

import io.github.sparksuppress.spark.common.InputColumns
import io.github.sparksuppress.spark.join.{InitialVersionColumns, JoinColumns, StreamTableJoinRequest}

/** A join's table side as the fused plan reads it: the changelog and its columns, by their resolved names. */
private[chain] final case class ChainTableSide(
    changelog: DataFrame,
    keys: Seq[String],
    timestamp: String,
    tombstone: Option[String],
    valueSchema: StructType,
    initial: Option[ChainInitialVersions]
)

/**
 * A join's initial versions as the fused plan reads them: the static DataFrame and its name for each changelog
 * column.
 */
private[chain] final case class ChainInitialVersions(versions: DataFrame, named: Map[String, String])

/** Checks a stream-table join that starts a chain and resolves its node and table side. */
private[chain] object ChainJoin {

  def resolve(j: StreamTableJoinRequest, streamSchema: StructType, tablePerKey: Boolean, op: String)
      : (JoinNodeSpec, ChainTableSide) = {
    val table = j.table.changelog
    InputColumns.requireStreaming(table, "the table changelog", op)
    InputColumns.requireNoUpstreamStatefulOperator(table, op)
    val columns = JoinColumns.resolve(j, streamSchema, table.schema, op)
    val valueSchema = columns.tableValueSchema
    // The API has checked the grace rules; the node only renames the spec after the chain step.
    val spec = j.spec.copy(name = op)
    val node = JoinNodeSpec(op, spec, streamSchema, valueSchema, columns.streamKeys, columns.streamValues, tablePerKey)
    val t = columns.tableColumns
    val initial = j.table.initialVersions.map { v =>
      ChainInitialVersions(v, InitialVersionColumns.named(v, t, table.schema, op))
    }
    (node, ChainTableSide(table, t.keys, t.timestamp, t.tombstone, valueSchema, initial))
  }
}
