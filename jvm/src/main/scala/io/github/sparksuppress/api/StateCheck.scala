package io.github.sparksuppress.api

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.execution.{CollectMetricsExec, SparkPlan}
import org.apache.spark.sql.sparksuppress.StateFiles
import org.apache.spark.sql.streaming.StreamingQuery

import io.github.sparksuppress.shims.StreamingRuntime
import io.github.sparksuppress.spark.common.MetricsRegistry

/**
 * Which state file of a checkpoint is damaged, and whose state it is.
 *
 * Spark's HDFS-backed state store reads an operator's files before any code of the operator runs, and when one does
 * not read (truncated, emptied, a flipped bit) the query fails with `CANNOT_LOAD_STATE_STORE.UNCATEGORIZED` (Spark
 * 4.0 to 4.3) or the bare `EOFException` / LZ4 `IOException` (3.5): neither names the file nor the operator, and no
 * hook lets a library add them to that error (docs/reliability.md, "Bad state and bad places"). These read the files
 * the way Spark does and say which ones fail, naming the spark-suppress operator whose state each holds.
 */
object StateCheck {

  /** A state file Spark cannot read: its path, Spark's operator id and partition, whose state it is, and why. */
  final case class DamagedFile(path: String, operatorId: Long, partition: Int, operator: String, problem: String) {
    def describe: String =
      s"$path (the state of $operator, Spark's stateful operator $operatorId, partition $partition): $problem"
  }

  private val HdfsProvider = "HDFSBackedStateStoreProvider"
  private val ProviderKey = "spark.sql.streaming.stateStore.providerClass"
  private val CodecKey = "spark.sql.streaming.stateStore.compression.codec"

  /**
   * The state files under `checkpointLocation` that a restart would fail to read (for the HDFS-backed provider: the
   * newest snapshot and the deltas after it of every operator and partition). Operators are named by Spark's id only:
   * [[explain]] names them after the query's spark-suppress operators.
   */
  def damagedFiles(spark: SparkSession, checkpointLocation: String): Seq[DamagedFile] =
    damaged(spark, new Path(checkpointLocation), _ => None)

  /**
   * Why `query` failed, if it failed loading state from files that do not read: each such file with the operator
   * whose state it holds (the user-given name of the spark-suppress operator, a chain's node names), and what to do.
   * None if the query has not failed, or failed for another reason, or every state file reads.
   */
  def explain(query: StreamingQuery): Option[String] = {
    val failure = query.exception.map { e =>
      Option(e.getMessage).getOrElse("") + Option(e.cause).map(" " + _).getOrElse("")
    }
    if (!failure.exists(loadingState)) return None
    val execution = query match {
      case w: StreamingRuntime.StreamingQueryWrapper => w.streamingQuery
      case _ => return None
    }
    val checkpoint = new Path(execution.resolvedCheckpointRoot)
    val plan = Option(execution.lastExecution).flatMap(e => scala.util.Try(e.executedPlan).toOption)
    val names = plan.map(operatorNames).getOrElse(Map.empty[Long, String])
    val found = damaged(query.sparkSession, checkpoint, names.get)
    if (found.isEmpty) None
    else {
      val files = if (found.size == 1) "One of its state files does" else s"${found.size} of its state files do"
      Some(
        s"The query ${Option(query.name).map(n => s"'$n' ").getOrElse("")}(id ${query.id}) failed loading its " +
          s"state from the checkpoint $checkpoint. $files not read to the end as Spark reads them:\n" +
          found.map("  " + _.describe).mkString("\n") + "\nRestore the checkpoint's state directory from a copy, " +
          "or start the query from a new checkpoint (its buffered state is then lost)."
      )
    }
  }

  /** Whether a query's failure is Spark failing to load a state store (the error of each Spark line). */
  private[sparksuppress] def loadingState(failure: String): Boolean =
    Seq("CANNOT_LOAD_STATE_STORE", "CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED", "StateStoreProvider")
      .exists(failure.contains)

  private def damaged(spark: SparkSession, checkpoint: Path, name: Long => Option[String]): Seq[DamagedFile] = {
    val hadoop = spark.sparkContext.hadoopConfiguration
    val provider = spark.conf.getOption(ProviderKey).getOrElse(HdfsProvider)
    // RocksDB keeps its state in its own files (zipped checkpoints, changelogs), which this does not read.
    if (!provider.endsWith(HdfsProvider)) return Nil
    val codec = StateFiles.codecOf(checkpoint, hadoop, spark.conf.getOption(CodecKey).getOrElse("lz4"))
    StateFiles.stores(checkpoint, hadoop).flatMap(StateFiles.damaged(_, hadoop, codec)).map { d =>
      val who = name(d.store.operatorId).getOrElse(s"Spark's stateful operator ${d.store.operatorId}")
      val store = if (d.store.storeName.isEmpty) "" else s", store ${d.store.storeName}"
      val problem = s"${d.length} bytes; ${d.problem}"
      DamagedFile(d.file.toString, d.store.operatorId, d.store.partition, who + store, problem)
    }
  }

  /**
   * The spark-suppress operator each stateful operator of the plan belongs to, by Spark's operator id. Every operator
   * of this library observes its output under its name (`spark_suppress:<name>#<n>`, a chain once per node, stacked
   * directly on one another); its `flatMapGroupsWithState` nodes are below that observation, the join's two of them
   * too. Other stateful operators (Spark's own) are named by Spark's node name.
   */
  private def operatorNames(plan: SparkPlan): Map[Long, String] = {
    val found = Map.newBuilder[Long, String]
    def observed(node: SparkPlan): Option[String] = node match {
      case c: CollectMetricsExec if c.name.startsWith(MetricsRegistry.ObservationPrefix) =>
        Some(c.name.stripPrefix(MetricsRegistry.ObservationPrefix).replaceAll("#\\d+$", ""))
      case _ => None
    }
    def walk(node: SparkPlan, names: Seq[String], stacked: Boolean): Unit = (node, observed(node)) match {
      case (_, Some(name)) => node.children.foreach(walk(_, if (stacked) name +: names else Seq(name), stacked = true))
      case (s: StreamingRuntime.StatefulOperator, _) =>
        s.stateInfo.map(_.operatorId).foreach { i =>
          found += i -> (
            if (names.nonEmpty && s.nodeName.startsWith("FlatMapGroupsWithState")) {
              s"spark-suppress operator ${names.map(n => s"'$n'").mkString(" -> ")}"
            } else s"Spark's ${s.nodeName}"
          )
        }
        s.children.foreach(walk(_, names, stacked = false))
      case _ => node.children.foreach(walk(_, names, stacked = false))
    }
    walk(plan, Nil, stacked = false)
    found.result()
  }
}
