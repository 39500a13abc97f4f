package io.github.sparksuppress.api

import io.github.sparksuppress.core.BufferFullStrategy

/**
 * How much a suppression may buffer and what happens when that is exceeded, as Kafka's `Suppressed.BufferConfig`.
 *
 * Bounds hold per shard of the operator's state (by default one shard per state partition, like Kafka's per-task
 * bounds). Two kinds, told apart by type: an [[EagerBufferConfig]] may emit records early when full; a
 * [[StrictBufferConfig]] never does (it is unbounded, shuts the query down, or spills to disk), so only it is
 * accepted by `Suppressed.untilWindowCloses`.
 */
sealed trait BufferConfig extends Serializable {

  /** Bound on buffered keys; `Long.MaxValue` when unbounded. */
  def maxRecords: Long

  /** Bound on buffered bytes (see the size formula in the README); `Long.MaxValue` when unbounded. */
  def maxBytes: Long

  /** What happens when a bound is exceeded. */
  def bufferFullStrategy: BufferFullStrategy

  /** How entry sizes are counted against [[maxBytes]]. */
  def sizeModel: EntrySizeModel

  /** A copy that counts entry sizes with `model` (same kind of config). */
  def withSizeModel(model: EntrySizeModel): BufferConfig

  /** True when the buffer lives in the RocksDB state store and is never bounded in memory by this library. */
  def spillsToDisk: Boolean

  /** A copy with the record bound set (same kind of config). */
  def withMaxRecords(recordLimit: Long): BufferConfig

  /** A copy with the byte bound set (same kind of config). */
  def withMaxBytes(byteLimit: Long): BufferConfig

  /** A copy with no bound at all: a strict config that never emits early. */
  def withNoBound(): StrictBufferConfig = StrictBufferConfig(Long.MaxValue, Long.MaxValue, spill = false, sizeModel)

  /** When full, emit the oldest records early (best-effort suppression). */
  def emitEarlyWhenFull(): EagerBufferConfig = EagerBufferConfig(maxRecords, maxBytes, sizeModel)

  /** When full, stop the query with an error naming the operator, the bound and the current counts. */
  def shutDownWhenFull(): StrictBufferConfig = StrictBufferConfig(maxRecords, maxBytes, spill = false, sizeModel)

  /**
   * Keep the buffer in the RocksDB state store provider and never emit early: memory is then RocksDB's to manage and
   * bounds are not enforced. The query refuses to start unless the session uses that provider.
   */
  def spillToDisk(): StrictBufferConfig = StrictBufferConfig(maxRecords, maxBytes, spill = true, sizeModel)

  def isBounded: Boolean = !spillsToDisk && (maxRecords != Long.MaxValue || maxBytes != Long.MaxValue)
}

object BufferConfig {

  /** No bound: every record stays until its time comes. */
  def unbounded(): StrictBufferConfig =
    StrictBufferConfig(Long.MaxValue, Long.MaxValue, spill = false, EntrySizeModel.Kafka)

  /** At most `recordLimit` keys; emits early when full (use `shutDownWhenFull()` for strictness). */
  def maxRecords(recordLimit: Long): EagerBufferConfig =
    EagerBufferConfig(Long.MaxValue, Long.MaxValue, EntrySizeModel.Kafka).withMaxRecords(recordLimit)

  /** At most `byteLimit` bytes; emits early when full (use `shutDownWhenFull()` for strictness). */
  def maxBytes(byteLimit: Long): EagerBufferConfig =
    EagerBufferConfig(Long.MaxValue, Long.MaxValue, EntrySizeModel.Kafka).withMaxBytes(byteLimit)

  private[api] def checkModel(model: EntrySizeModel): EntrySizeModel = {
    if (model == null) throw new IllegalArgumentException("sizeModel must not be null; use EntrySizeModel.Kafka.")
    model
  }

  private[api] def checkBound(name: String, value: Long): Long = {
    if (value < 0) {
      throw new IllegalArgumentException(s"$name must be >= 0, got $value; pass a non-negative bound, or use " +
        "BufferConfig.unbounded() for none.")
    }
    value
  }
}

/** A buffer config that emits the oldest records early when it is full. */
final case class EagerBufferConfig private[api] (maxRecords: Long, maxBytes: Long, sizeModel: EntrySizeModel)
    extends BufferConfig {
  def bufferFullStrategy: BufferFullStrategy = BufferFullStrategy.EmitEarly
  def spillsToDisk: Boolean = false
  def withMaxRecords(recordLimit: Long): EagerBufferConfig =
    copy(maxRecords = BufferConfig.checkBound("maxRecords", recordLimit))
  def withMaxBytes(byteLimit: Long): EagerBufferConfig =
    copy(maxBytes = BufferConfig.checkBound("maxBytes", byteLimit))
  def withSizeModel(model: EntrySizeModel): EagerBufferConfig = copy(sizeModel = BufferConfig.checkModel(model))
  override def toString: String =
    s"BufferConfig(maxRecords=${fmt(maxRecords)}, maxBytes=${fmt(maxBytes)}, emitEarlyWhenFull)"
  private def fmt(v: Long) = if (v == Long.MaxValue) "unbounded" else v.toString
}

/** A buffer config that never emits early: unbounded, shut down when full, or spilled to disk. */
final case class StrictBufferConfig private[api] (
    maxRecords: Long,
    maxBytes: Long,
    private val spill: Boolean,
    sizeModel: EntrySizeModel
) extends BufferConfig {
  def bufferFullStrategy: BufferFullStrategy = BufferFullStrategy.ShutDown
  def spillsToDisk: Boolean = spill
  def withMaxRecords(recordLimit: Long): StrictBufferConfig =
    copy(maxRecords = BufferConfig.checkBound("maxRecords", recordLimit))
  def withMaxBytes(byteLimit: Long): StrictBufferConfig =
    copy(maxBytes = BufferConfig.checkBound("maxBytes", byteLimit))
  def withSizeModel(model: EntrySizeModel): StrictBufferConfig = copy(sizeModel = BufferConfig.checkModel(model))
  override def toString: String =
    if (spill) "BufferConfig(spillToDisk)"
    else if (!isBounded) "BufferConfig(unbounded)"
    else s"BufferConfig(maxRecords=${fmt(maxRecords)}, maxBytes=${fmt(maxBytes)}, shutDownWhenFull)"
  private def fmt(v: Long) = if (v == Long.MaxValue) "unbounded" else v.toString
}
