package io.github.sparksuppress.core

import java.math.BigInteger

/**
 * Kafka's record lateness, `max(0, stream time before the record - record timestamp)`, for the records of one input
 * partition of a micro-batch, summed before the stream time they start from is known.
 *
 * Kafka measures lateness per task against the task's stream time (the largest timestamp it has processed). Here a
 * task is an input partition of a micro-batch: its stream time before record r is `max(A, p(r-1))`, where `p` is the
 * running maximum of the partition's timestamps in arrival order and `A` the stream time at the start of the batch
 * (the watermark), which the map side never sees. Lateness is piecewise linear in `A` with breaks only at "frontier"
 * records (those that raise `p`): with `k` the first frontier record whose timestamp is `>= A`, every record before
 * `k` is `A - ts` late, `k` itself is on time, and every record after it is `p(r-1) - ts` late whatever `A` is. So
 * one entry per frontier record (prefix count, sum and minimum of timestamps, and the lateness of the records after
 * it) gives the exact total and maximum for any `A`.
 *
 * In-order data makes every record a frontier record, so entries are capped at `capacity`: when full, every second
 * entry is dropped and its records count with the next kept entry. Then the result is exact unless `A` falls between
 * two kept entries, where the records in between are measured against `A` instead of `p` (an underestimate). The
 * first entry is never dropped, so batches whose records are all newer than the watermark stay exact.
 */
final class LatenessSketch(capacity: Int = LatenessSketch.DefaultCapacity) {
  require(capacity >= 2)

  private[this] var n = 0L
  private[this] var base = 0L // the first timestamp; sums are relative to it so that they stay small
  private[this] var sumRel = 0L
  private[this] var minTs = Long.MaxValue
  private[this] var runningMax = Long.MinValue
  private[this] var localSum = 0L // sum over records of p(r-1) - ts where positive

  // Frontier entries: timestamp, records before it, their relative timestamp sum and minimum, the local
  // lateness sum before it, and the largest local lateness between it and the next kept entry.
  private[this] var fTs = new Array[Long](8)
  private[this] var fBefore = new Array[Long](8)
  private[this] var fSumRel = new Array[Long](8)
  private[this] var fMin = new Array[Long](8)
  private[this] var fLocal = new Array[Long](8)
  private[this] var fSegMax = new Array[Long](8)
  private[this] var m = 0

  def records: Long = n
  def entries: Int = m

  /** The largest timestamp added so far (Long.MinValue before the first). */
  def maxTimestamp: Long = runningMax

  def add(ts: Long): Unit = {
    if (n == 0) base = ts
    if (ts > runningMax) {
      if (m == capacity) thin()
      if (m == fTs.length) grow()
      fTs(m) = ts; fBefore(m) = n; fSumRel(m) = sumRel; fMin(m) = minTs; fLocal(m) = localSum; fSegMax(m) = 0L
      m += 1
      runningMax = ts
    } else {
      val late = runningMax - ts
      localSum += late
      if (late > fSegMax(m - 1)) fSegMax(m - 1) = late
    }
    n += 1
    sumRel += ts - base
    if (ts < minTs) minTs = ts
  }

  private def grow(): Unit = {
    val size = math.min(capacity, fTs.length * 2)
    fTs = java.util.Arrays.copyOf(fTs, size); fBefore = java.util.Arrays.copyOf(fBefore, size)
    fSumRel = java.util.Arrays.copyOf(fSumRel, size); fMin = java.util.Arrays.copyOf(fMin, size)
    fLocal = java.util.Arrays.copyOf(fLocal, size); fSegMax = java.util.Arrays.copyOf(fSegMax, size)
  }

  private def thin(): Unit = {
    var w = 0
    var i = 0
    while (i < m) {
      fTs(w) = fTs(i); fBefore(w) = fBefore(i); fSumRel(w) = fSumRel(i); fMin(w) = fMin(i); fLocal(w) = fLocal(i)
      fSegMax(w) = if (i + 1 < m) math.max(fSegMax(i), fSegMax(i + 1)) else fSegMax(i)
      w += 1
      i += 2
    }
    m = w
  }

  /** Total and maximum lateness of the records when the partition's stream time starts at `streamTime`. */
  def evaluate(streamTime: Long): LatenessSketch.Result = {
    if (n == 0) return LatenessSketch.Result(0L, 0L, 0L)
    var lo = 0
    var hi = m
    while (lo < hi) { // first entry with fTs >= streamTime
      val mid = (lo + hi) >>> 1
      if (fTs(mid) >= streamTime) hi = mid else lo = mid + 1
    }
    val k = lo
    val (count, sumBefore, minBefore) = if (k == m) (n, sumRel, minTs) else (fBefore(k), fSumRel(k), fMin(k))
    // sum over the records before k of (A - ts) = count * (A - base) - sumRel, exactly.
    val before = BigInteger.valueOf(count).multiply(BigInteger.valueOf(streamTime).subtract(BigInteger.valueOf(base)))
      .subtract(BigInteger.valueOf(sumBefore))
    var tailSum = 0L
    var tailMax = 0L
    if (k < m) {
      tailSum = localSum - fLocal(k)
      var j = k
      while (j < m) { if (fSegMax(j) > tailMax) tailMax = fSegMax(j); j += 1 }
    }
    val total = before.add(BigInteger.valueOf(tailSum)).max(BigInteger.ZERO)
    val maxBefore = if (count > 0) TimeMath.minus(streamTime, minBefore) else 0L
    LatenessSketch.Result(n, LatenessSketch.clamp(total), math.max(0L, math.max(maxBefore, tailMax)))
  }

  def write(out: ByteWriter): Unit = {
    out.writeVarLong(n); out.writeZigZag(base); out.writeZigZag(sumRel); out.writeZigZag(minTs)
    out.writeZigZag(runningMax); out.writeVarLong(localSum); out.writeVarLong(m.toLong)
    var i = 0
    while (i < m) {
      out.writeZigZag(fTs(i)); out.writeVarLong(fBefore(i)); out.writeZigZag(fSumRel(i)); out.writeZigZag(fMin(i))
      out.writeVarLong(fLocal(i)); out.writeVarLong(fSegMax(i))
      i += 1
    }
  }

  private[core] def readFrom(in: ByteReader): Unit = {
    n = in.readVarLong(); base = in.readZigZag(); sumRel = in.readZigZag(); minTs = in.readZigZag()
    runningMax = in.readZigZag(); localSum = in.readVarLong(); m = in.readVarLong().toInt
    if (m < 0 || m > capacity) throw new IllegalStateException(s"malformed lateness sketch: $m entries")
    fTs = new Array[Long](math.max(m, 8)); fBefore = new Array[Long](fTs.length); fSumRel = new Array[Long](fTs.length)
    fMin = new Array[Long](fTs.length); fLocal = new Array[Long](fTs.length); fSegMax = new Array[Long](fTs.length)
    var i = 0
    while (i < m) {
      fTs(i) = in.readZigZag(); fBefore(i) = in.readVarLong(); fSumRel(i) = in.readZigZag(); fMin(i) = in.readZigZag()
      fLocal(i) = in.readVarLong(); fSegMax(i) = in.readVarLong()
      i += 1
    }
  }
}

object LatenessSketch {
  val DefaultCapacity = 256

  /** `records` measured, their total and maximum lateness in milliseconds. */
  final case class Result(records: Long, total: Long, max: Long)

  private def clamp(v: BigInteger): Long = if (v.bitLength() > 63) Long.MaxValue else v.longValue()

  def read(in: ByteReader): LatenessSketch = {
    val s = new LatenessSketch(DefaultCapacity)
    s.readFrom(in)
    s
  }
}
