package io.github.sparksuppress.core

/** Receives the records a [[Suppressor]] lets out, oldest first. */
trait SuppressionEmitter[K, V] {
  def emit(record: BufferedRecord[K, V]): Unit
}

/**
 * Kafka's suppress processor over a [[SuppressionBuffer]], driven by an explicit stream time.
 *
 * Per record: buffer it; evict every entry with `bufferTime <= streamTime - timeLimit` (inclusive); then, while a
 * bound is exceeded (strictly), evict the oldest entry or fail, as the spec says. Stream time is the caller's:
 * Kafka's is the largest timestamp the node has seen, the Spark adapter's is the watermark combined with the records
 * of the micro-batch.
 */
final class Suppressor[K, V](
    val spec: SuppressionSpec,
    isTombstone: V => Boolean,
    val metrics: SuppressionMetrics = new SuppressionMetrics
)(implicit keys: KeyOps[K]) {

  val buffer = new SuppressionBuffer[K, V](spec.bufferTimeRule)

  def put(
      key: K,
      value: V,
      timestamp: Long,
      bufferTime: Long,
      size: Long,
      streamTime: Long,
      out: SuppressionEmitter[K, V]
  ): Unit = {
    buffer.put(key, value, timestamp, bufferTime, size)
    sample()
    evictExpired(streamTime, out)
    enforceBounds(out)
  }

  /** Lets out every entry whose time limit has passed at `streamTime`. */
  def evictExpired(streamTime: Long, out: SuppressionEmitter[K, V]): Unit = {
    val expiry = TimeMath.minus(streamTime, spec.timeLimitMs)
    if (buffer.minBufferTime <= expiry) {
      while (buffer.minBufferTime <= expiry) emit(buffer.evictOldest(), out)
      sample()
    }
  }

  /** The earliest stream time at which an entry becomes due, or `Long.MaxValue` if none ever will. */
  def nextDueStreamTime: Long =
    if (buffer.isEmpty || spec.timeLimitMs == Long.MaxValue) Long.MaxValue
    else TimeMath.plus(buffer.minBufferTime, spec.timeLimitMs)

  def overCapacity: Boolean = buffer.numRecords > spec.maxRecords || buffer.sizeBytes > spec.maxBytes

  private def enforceBounds(out: SuppressionEmitter[K, V]): Unit =
    if (overCapacity) spec.whenFull match {
      case BufferFullStrategy.EmitEarly =>
        while (overCapacity) emit(buffer.evictOldest(), out)
        sample()
      case BufferFullStrategy.ShutDown =>
        throw new BufferFullException(spec.name, buffer.numRecords, spec.maxRecords, buffer.sizeBytes, spec.maxBytes)
    }

  private def emit(record: BufferedRecord[K, V], out: SuppressionEmitter[K, V]): Unit =
    if (!(spec.dropTombstones && isTombstone(record.value))) {
      metrics.emitTotal += 1
      out.emit(record)
    }

  /** Records a metrics sample of the buffer as it is now (Kafka samples at open, put and eviction). */
  def sample(): Unit = metrics.sample(buffer.numRecords, buffer.sizeBytes)
}
