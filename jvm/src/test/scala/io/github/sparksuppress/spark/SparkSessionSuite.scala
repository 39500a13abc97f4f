package io.github.sparksuppress.spark

import java.nio.file.{Files, Path}
import java.util.concurrent.ConcurrentLinkedQueue

import org.apache.spark.sql.SparkSession
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.github.sparksuppress.testing.CheckpointFiles

/** One local SparkSession per suite, few shuffle partitions, UTC, as Spark's own streaming suites do. */
trait SparkSessionSuite extends AnyFunSuite with BeforeAndAfterAll {
  @transient protected var spark: SparkSession = _

  protected def extraConf: Map[String, String] = Map.empty

  /** The master URL; `local[2,3]` would allow each task three attempts (for failure-injection suites). */
  protected def master: String = "local[2]"

  /**
   * False to write checkpoints as users' queries do (Spark's default checkpoint file manager): the reliability
   * suites, which stop, damage and read back checkpoints. The others use `SparkSessionSuite.QuickCheckpoints`.
   */
  protected def quickCheckpoints: Boolean = true

  private val tempDirs = new ConcurrentLinkedQueue[Path]()

  override def beforeAll(): Unit = {
    super.beforeAll()
    val builder = SparkSession.builder()
      .master(master)
      .appName(getClass.getSimpleName)
      .config("spark.sql.shuffle.partitions", "2")
      .config("spark.ui.enabled", "false")
      .config("spark.sql.session.timeZone", "UTC")
      .config("spark.sql.streaming.checkpointLocation", tempDir("ss-ckpt"))
    if (quickCheckpoints) SparkSessionSuite.QuickCheckpoints.foreach { case (k, v) => builder.config(k, v) }
    extraConf.foreach { case (k, v) => builder.config(k, v) }
    spark = builder.getOrCreate()
  }

  override def afterAll(): Unit = {
    try if (spark != null) spark.stop()
    finally
      try tempDirs.forEach(d => CheckpointFiles.delete(d))
      finally super.afterAll()
  }

  /**
   * A new directory under the system's temp directory, deleted with all it holds once the suite's session stopped:
   * every suite writes checkpoints, and a run of `make test` would otherwise leave hundreds behind.
   */
  protected def tempDir(prefix: String): String = {
    val dir = Files.createTempDirectory(prefix)
    tempDirs.add(dir)
    dir.toString
  }
}

object SparkSessionSuite {

  /**
   * Spark's default checkpoint file manager goes through Hadoop's FileContext, which without Hadoop's native library
   * forks a shell (chmod, readlink) for every file it creates or renames: several per micro-batch, a large share of
   * the CPU of suites that run thousands of small batches. The FileSystem-based manager (Spark's own, for file
   * systems without FileContext) creates and renames without the readlink. Its class moved in Spark 4.1. Under it,
   * the benchmarks' fork-free local file system (benchmarks/jvm/localfs) sets permissions and reads links in Java:
   * Hadoop's own still forks a chmod for every file it creates. Hadoop caches one file system per scheme for the
   * whole JVM, which every suite of a line shares, so the fork-free one is not cached: the suites that write
   * checkpoints as users' queries do keep Hadoop's own.
   */
  val QuickCheckpoints: Map[String, String] = Map(
    "spark.sql.streaming.checkpointFileManagerClass" -> Seq(
      "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager",
      "org.apache.spark.sql.execution.streaming.FileSystemBasedCheckpointFileManager"
    ).find(c => scala.util.Try(Class.forName(c)).isSuccess).get,
    "spark.hadoop.fs.file.impl" -> classOf[io.github.sparksuppress.bench.fs.ForkFreeLocalFileSystem].getName,
    "spark.hadoop.fs.file.impl.disable.cache" -> "true"
  )
}
