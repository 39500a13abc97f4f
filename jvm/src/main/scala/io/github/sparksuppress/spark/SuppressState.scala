package io.github.sparksuppress.spark

import org.apache.spark.sql.Row

import io.github.sparksuppress.core._

/**
 * The stored form of one group's suppression buffer (a single key, or all keys of a shard):
 *
 * {{{
 *   format (1 byte) | operator name (bytes, empty when unnamed) | run epoch (zig-zag)
 *   | row schema descriptor | buffer entries (SuppressionBufferCodec)
 * }}}
 *
 * The format byte lets a future version refuse or migrate old state with a clear message; the name guards
 * against loading another named operator's state; the epoch tells metrics whether an entry was buffered before
 * this run of the query; the descriptor lets buffered rows survive added or dropped columns.
 */
private[spark] object SuppressState {
  val Format: Int = 1

  final case class Loaded(buffer: SuppressionBuffer[Array[Byte], Row], epoch: Long)

  def write(buffer: SuppressionBuffer[Array[Byte], Row], name: Option[String], epoch: Long, rows: RowCodec): Array[Byte] = {
    val out = new ByteWriter(64 + buffer.numRecords * 64)
    out.writeByte(Format)
    out.writeBytes(name.map(_.getBytes("UTF-8")).getOrElse(Array.emptyByteArray))
    out.writeZigZag(epoch)
    rows.writeDescriptor(out)
    SuppressionBufferCodec.write(buffer, out)(Codec.bytes, rowCodec(rows, null))
    out.toByteArray
  }

  def read(
      bytes: Array[Byte],
      into: SuppressionBuffer[Array[Byte], Row],
      name: Option[String],
      operator: String,
      rows: RowCodec): Long = {
    val in = new ByteReader(bytes)
    val format = in.readByte()
    if (format != Format) {
      throw new IllegalStateException(
        s"$operator: the stored state has format $format, but this spark-suppress version reads format $Format. " +
          "Restart with the spark-suppress version that wrote the checkpoint, or start from a new checkpoint.")
    }
    val storedName = new String(in.readBytes(), "UTF-8")
    name.foreach { n =>
      if (storedName.nonEmpty && storedName != n) {
        throw new IllegalStateException(
          s"$operator: the state at this operator's position in the checkpoint belongs to the operator named " +
            s"'$storedName'. Spark locates state by operator position, so the query's stateful operators were " +
            "reordered or replaced; restore the original order, or start from a new checkpoint.")
      }
    }
    val epoch = in.readZigZag()
    val rowReader = rows.readDescriptor(in)
    SuppressionBufferCodec.read(in, into)(Codec.bytes, rowCodec(rows, rowReader))
    epoch
  }

  private def rowCodec(rows: RowCodec, reader: ByteReader => Row): Codec[Row] = new Codec[Row] {
    def write(out: ByteWriter, value: Row): Unit = rows.writeRow(out, value)
    def read(in: ByteReader): Row = reader(in)
  }
}
