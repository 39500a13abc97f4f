package org.apache.spark.sql.sparksuppress

import java.io.{DataInputStream, EOFException}

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{ChecksumFileSystem, FileStatus, FileSystem, Path}
import org.apache.spark.SparkConf
import org.apache.spark.io.CompressionCodec

/**
 * Reads the files of Spark's HDFS-backed state store provider as Spark does
 * (`<checkpoint>/state/<operator>/<partition>`, optionally a store name below that, then `<version>.delta` and
 * `<version>.snapshot`, a version possibly followed by `_<id>`), to find the ones Spark cannot load. Each file is the
 * state store's compression codec around records of key size, key, value size (-1: removed, in deltas) and value,
 * ended by a key size of -1; the same on Spark 3.5 to 4.3.
 *
 * In Spark's package for its codec factory (`CompressionCodec.createCodec` is private to Spark); used by
 * `io.github.sparksuppress.api.StateCheck`.
 */
object StateFiles {

  /** One state store's directory: its operator id, partition, and store name (empty for the default store). */
  final case class Store(dir: Path, operatorId: Long, partition: Int, storeName: String)

  /** A file Spark would read to load the newest version of a store, which does not read to its end marker. */
  final case class Damaged(store: Store, file: Path, length: Long, problem: String)

  private val File = """(\d+)(_[^.]*)?\.(delta|snapshot)""".r
  private val Number = """\d+"""

  /** The stores of the checkpoint's stateful operators, in operator and partition order. */
  def stores(checkpoint: Path, hadoop: Configuration): Seq[Store] = {
    val fs = checkpoint.getFileSystem(hadoop)
    val root = new Path(checkpoint, "state")
    def dirs(p: Path): Seq[FileStatus] =
      if (!fs.exists(p)) Nil else fs.listStatus(p).toSeq.filter(_.isDirectory).sortBy(_.getPath.getName)
    for {
      op <- dirs(root) if op.getPath.getName.matches(Number)
      part <- dirs(op.getPath) if part.getPath.getName.matches(Number)
      (dir, name) <- (part.getPath -> "") +: dirs(part.getPath).filterNot(_.getPath.getName.startsWith("_"))
        .map(d => d.getPath -> d.getPath.getName)
    } yield Store(dir, op.getPath.getName.toLong, part.getPath.getName.toInt, name)
  }

  /**
   * The files a load of the store's newest version reads (its newest snapshot and the deltas after it, or every delta
   * without a snapshot) that cannot be read through: truncated, emptied, not what the codec wrote, or sizes that are
   * not a record's.
   */
  def damaged(store: Store, hadoop: Configuration, codecName: String): Seq[Damaged] = {
    val fs = store.dir.getFileSystem(hadoop)
    val files = fs.listStatus(store.dir).toSeq.filter(_.isFile).flatMap { f =>
      f.getPath.getName match {
        case File(version, _, kind) => Some((version.toLong, kind, f))
        case _ => None
      }
    }
    val snapshot = files.filter(_._2 == "snapshot").map(_._1).sorted.lastOption
    val read = files.filter { case (v, kind, _) => snapshot.forall(s => v > s || (v == s && kind == "snapshot")) }
    val codec = CompressionCodec.createCodec(new SparkConf(false), codecName)
    // Spark's checkpoint file manager reads the bytes without Hadoop's checksum files (`.<name>.crc`) of a local file
    // system, so its error is the codec's: read them as it does.
    val raw = fs match {
      case c: ChecksumFileSystem => c.getRawFileSystem
      case other => other
    }
    read.sortBy(_._1).flatMap { case (_, kind, f) =>
      problem(raw, f.getPath, codec, removals = kind == "delta").map(Damaged(store, f.getPath, f.getLen, _))
    }
  }

  /** Why the file does not read as Spark reads it, if it does not. */
  private def problem(fs: FileSystem, file: Path, codec: CompressionCodec, removals: Boolean): Option[String] = {
    var in: DataInputStream = null
    try {
      in = new DataInputStream(codec.compressedInputStream(fs.open(file)))
      var records = 0L
      var keySize = in.readInt()
      while (keySize != -1) {
        if (keySize < 0) return Some(s"record ${records + 1} has a key size of $keySize")
        in.skipNBytes(keySize.toLong)
        val valueSize = in.readInt()
        if (valueSize < -1 || (valueSize == -1 && !removals)) {
          return Some(s"record ${records + 1} has a value size of $valueSize")
        }
        if (valueSize > 0) in.skipNBytes(valueSize.toLong)
        records += 1
        keySize = in.readInt()
      }
      None
    } catch {
      case e: EOFException => Some(s"it ends before its last record (${describe(e)})")
      case NonFatal(e) => Some(s"it does not decompress (${describe(e)})")
    } finally {
      if (in != null) {
        try in.close()
        catch { case NonFatal(_) => () }
      }
    }
  }

  private def describe(e: Throwable): String =
    Option(e.getMessage).filter(_.nonEmpty).map(m => s"${e.getClass.getName}: $m").getOrElse(e.getClass.getName)

  /**
   * The state store's codec as the checkpoint recorded it (the newest offset log entry's configuration, which a
   * restarted query uses whatever its session says), else `fallback`.
   */
  def codecOf(checkpoint: Path, hadoop: Configuration, fallback: String): String = {
    val offsets = new Path(checkpoint, "offsets")
    val fs = offsets.getFileSystem(hadoop)
    val newest =
      if (!fs.exists(offsets)) None
      else fs.listStatus(offsets).toSeq.filter(_.getPath.getName.matches(Number)).sortBy(_.getPath.getName.toLong)
        .lastOption
    val Codec = """"spark\.sql\.streaming\.stateStore\.compression\.codec"\s*:\s*"([^"]+)"""".r
    newest.flatMap { f =>
      val in = fs.open(f.getPath)
      try Codec.findFirstMatchIn(scala.io.Source.fromInputStream(in, "UTF-8").mkString).map(_.group(1))
      catch { case NonFatal(_) => None }
      finally in.close()
    }.getOrElse(fallback)
  }
}
