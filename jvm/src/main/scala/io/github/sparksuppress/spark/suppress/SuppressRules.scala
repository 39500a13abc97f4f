package io.github.sparksuppress.spark.suppress

import org.apache.spark.sql.DataFrame

/**
 * The suppress rules both the API and the chain's resolution of a suppress apply (a stand-alone suppress is a chain
 * of one: `spark/chain`).
 */
private[sparksuppress] object SuppressRules {
  val RocksDBProvider = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

  /** untilWindowCloses over input with no window, stand-alone or in a chain: Kafka refuses it at build time too. */
  def notWindowed(operator: String): IllegalArgumentException = new IllegalArgumentException(
    s"$operator: untilWindowCloses needs windowed input: " +
      "Window close time is only defined for windowed computations. " +
      "Pass window (a struct column with start and end, as window() produces, or the start and end columns), or put " +
      "the suppress after aggregate_windowed in the same query; after a non-windowed aggregate use untilTimeLimit."
  )

  /** untilWindowCloses on windowed input whose grace nothing upstream in the query gives. */
  def noGrace(operator: String): IllegalArgumentException = new IllegalArgumentException(
    s"$operator: untilWindowCloses needs grace: how long after a window's end late updates may still arrive " +
      "(e.g. the grace of the windowed aggregation that produced the input; Duration.ZERO for none)."
  )

  /** spillToDisk() needs the RocksDB state store provider (one check for the stand-alone suppress and a chain's). */
  def requireRocksDB(df: DataFrame, operator: String): Unit = {
    val provider = df.sparkSession.conf.get("spark.sql.streaming.stateStore.providerClass", "")
    if (!provider.contains("RocksDB")) {
      throw new IllegalArgumentException(
        s"$operator: spillToDisk() keeps the buffer in the RocksDB state store, but the session's " +
          s"spark.sql.streaming.stateStore.providerClass is '${if (provider.isEmpty) "(default: HDFS-backed, in memory)"
            else provider}'. " +
          s"Set it to $RocksDBProvider before starting the query."
      )
    }
  }
}
