package io.github.sparksuppress.spark.join

import org.apache.spark.sql.Row

import io.github.sparksuppress.core._
import io.github.sparksuppress.spark.common._

/**
 * The stored state of one key of a stream-table join's table side: its version history or latest value.
 *
 * {{{
 *   header (StateHeader) | table value row descriptor | entry (TableEntryCodec)
 * }}}
 */
private[spark] object JoinKeyState {
  val Format: Int = 1

  def write(entry: TableEntry[Row], name: Option[String], rows: RowCodec): Array[Byte] = {
    val out = new ByteWriter(128)
    StateHeader.write(out, Format, name)
    rows.writeDescriptor(out)
    TableEntryCodec.write(entry, out)(RowValues.writing(rows))
    out.toByteArray
  }

  def read(
      bytes: Array[Byte],
      spec: StreamTableJoinSpec,
      name: Option[String],
      operator: String,
      rows: RowCodec
  ): TableEntry[Row] = {
    val in = new ByteReader(bytes)
    StateHeader.decoding(in, operator, "table state") {
      StateHeader.read(in, Format, name, operator, "table state")
      val reader = rows.readDescriptor(in)
      TableEntryCodec.read[Row](in, spec)(RowValues.reading(reader))
    }
  }
}
