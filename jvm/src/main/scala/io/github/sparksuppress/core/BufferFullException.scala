package io.github.sparksuppress.core

/** A bounded buffer with the shut-down strategy went over a bound; the message follows Kafka's. */
final class BufferFullException(
    val operatorName: String,
    val numRecords: Long,
    val maxRecords: Long,
    val sizeBytes: Long,
    val maxBytes: Long
) extends RuntimeException(
      s"$operatorName buffer exceeded its max capacity. Currently [$numRecords/$maxRecords] records and " +
        s"[$sizeBytes/$maxBytes] bytes. The buffer is configured with shutDownWhenFull(); raise the bound " +
        "(maxRecords/maxBytes) or use emitEarlyWhenFull(), then restart from the checkpoint: the records buffered " +
        "before the failing micro-batch are kept."
    )
