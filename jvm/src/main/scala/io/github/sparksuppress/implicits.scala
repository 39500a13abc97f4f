package io.github.sparksuppress

import org.apache.spark.sql.DataFrame

import io.github.sparksuppress.api.{Suppress, Suppressed}

/** Optional syntax: `import io.github.sparksuppress.implicits._` and then `df.suppress(...)`. */
object implicits {
  implicit final class SuppressSyntax(private val df: DataFrame) extends AnyVal {

    /** `df.transform(Suppress(key, timestamp, suppressed))`. */
    def suppress(key: Seq[String], timestamp: String, suppressed: Suppressed): DataFrame =
      Suppress(key, timestamp, suppressed)(df)

    /** Applies a fully configured [[Suppress]] (window, grace, tombstone). */
    def suppress(op: Suppress): DataFrame = op(df)
  }
}
