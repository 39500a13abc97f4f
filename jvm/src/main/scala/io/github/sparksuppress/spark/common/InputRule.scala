package io.github.sparksuppress.spark.common

/**
 * How an operator reads input rows without a key or a usable event time, as docs/reliability.md ("Bad input")
 * documents it per operator: a chain follows its first operator's rule, and the windowed aggregation's map side
 * applies that operator's rule before the shuffle.
 *
 * @param nullKeyIsValue
 *   a null among the key values is an ordinary key value, as Spark's `groupBy` treats it (a suppress reads the user's
 *   table)
 * @param nullKeyWhenAllNull
 *   otherwise: the record has Kafka's null key only when every key column is null (a windowed aggregation: a partly
 *   null composite key is a key), or already when any is (a join: such a key never matches)
 * @param dropsBadTimes
 *   a null event time or one before 1970 drops the record, counted as the operator's dropped record (a windowed
 *   aggregation: Kafka's windows start at the epoch); otherwise a null event time stops the query
 * @param refusesPreEpoch
 *   without `dropsBadTimes`: an event time before 1970 stops the query (a suppress follows Spark's watermark, which
 *   never goes below 0, and Kafka refuses negative timestamps at its source)
 */
final case class InputRule(
    nullKeyIsValue: Boolean,
    nullKeyWhenAllNull: Boolean,
    dropsBadTimes: Boolean,
    refusesPreEpoch: Boolean
) {

  /** Whether a key with `nulls` null columns out of `columns` is Kafka's null key. */
  def isNullKey(nulls: Int, columns: Int): Boolean =
    nulls > 0 && !nullKeyIsValue && (!nullKeyWhenAllNull || nulls == columns)

  /** Whether a record is dropped (and counted) for its event time: null (`isNull`), or `ms` before 1970. */
  def dropsTime(isNull: Boolean, ms: Long): Boolean = dropsBadTimes && (isNull || ms < 0)
}

object InputRule {

  /** A suppress reading the user's table or stream; on the wall clock it keeps no event time to refuse. */
  def suppress(wallClock: Boolean): InputRule = InputRule(true, false, false, refusesPreEpoch = !wallClock)

  val WindowedAggregation: InputRule = InputRule(false, true, true, false)

  /** A join, and a non-windowed aggregation (Kafka's KTable aggregation): a key with a null column never matches. */
  val Keyed: InputRule = InputRule(false, false, false, false)
}
