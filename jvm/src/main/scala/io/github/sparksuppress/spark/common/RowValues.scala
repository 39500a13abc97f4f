package io.github.sparksuppress.spark.common

import org.apache.spark.sql.Row

import io.github.sparksuppress.core.{ByteReader, ByteWriter, Codec}

/** Rows as values of the core's stored structures: written by a [[RowCodec]], read by its descriptor's reader. */
private[spark] object RowValues {
  def writing(rows: RowCodec): Codec[Row] = new Codec[Row] {
    def write(out: ByteWriter, value: Row): Unit = rows.writeRow(out, value)
    def read(in: ByteReader): Row = throw new IllegalStateException("this row codec only writes")
  }

  def reading(reader: ByteReader => Row): Codec[Row] = new Codec[Row] {
    def write(out: ByteWriter, value: Row): Unit = throw new IllegalStateException("this row codec only reads")
    def read(in: ByteReader): Row = reader(in)
  }
}
