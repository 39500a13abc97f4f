package io.github.sparksuppress.spark

import java.nio.file.Files

import org.apache.spark.sql.SparkSession
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** One local SparkSession per suite, few shuffle partitions, UTC, as Spark's own streaming suites do. */
trait SparkSessionSuite extends AnyFunSuite with BeforeAndAfterAll {
  @transient protected var spark: SparkSession = _

  protected def extraConf: Map[String, String] = Map.empty

  /** The master URL; `local[2,3]` would allow each task three attempts (for failure-injection suites). */
  protected def master: String = "local[2]"

  override def beforeAll(): Unit = {
    super.beforeAll()
    val builder = SparkSession.builder()
      .master(master)
      .appName(getClass.getSimpleName)
      .config("spark.sql.shuffle.partitions", "2")
      .config("spark.ui.enabled", "false")
      .config("spark.sql.session.timeZone", "UTC")
      .config("spark.sql.streaming.checkpointLocation", Files.createTempDirectory("ss-ckpt").toString)
    extraConf.foreach { case (k, v) => builder.config(k, v) }
    spark = builder.getOrCreate()
  }

  override def afterAll(): Unit = {
    try if (spark != null) spark.stop()
    finally super.afterAll()
  }

  protected def tempDir(prefix: String): String = Files.createTempDirectory(prefix).toString
}
