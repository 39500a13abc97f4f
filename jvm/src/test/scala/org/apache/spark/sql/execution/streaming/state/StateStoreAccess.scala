package org.apache.spark.sql.execution.streaming.state

import java.io.{DataInputStream, DataOutputStream, EOFException, File, FileInputStream, FileOutputStream}

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.SparkConf
import org.apache.spark.io.CompressionCodec

/** Test access to Spark's state stores (package-private in Spark). */
object StateStoreAccess {

  /** Drops every state store provider this JVM has loaded: the next query reads its state from the checkpoint. */
  def unloadAll(): Unit = StateStore.unloadAll()

  /**
   * Rewrites the values of an HDFS-backed state store's delta file (`<checkpoint>/state/<op>/<partition>/<v>.delta`:
   * compressed records of key size, key bytes, value size, value bytes, ended by -1) with `rewrite`, and removes its
   * checksums so that the edited file is read as it is: Hadoop's (`.<name>.crc`) and, on Spark 4.1, Spark's own
   * checkpoint file checksum (`<name>.crc`, verified on read). Returns how many values changed.
   */
  def rewriteDeltaValues(delta: File, conf: SparkConf, rewrite: Array[Byte] => Array[Byte]): Int = {
    val codec = CompressionCodec.createCodec(conf, conf.get("spark.sql.streaming.stateStore.compression.codec", "lz4"))
    val records = ArrayBuffer.empty[(Array[Byte], Array[Byte])]
    val in = new DataInputStream(codec.compressedInputStream(new FileInputStream(delta)))
    try {
      var keySize = in.readInt()
      while (keySize != -1) {
        val key = new Array[Byte](keySize); in.readFully(key)
        val valueSize = in.readInt()
        val value = if (valueSize < 0) null else { val v = new Array[Byte](valueSize); in.readFully(v); v }
        records += key -> value
        keySize =
          try in.readInt()
          catch { case _: EOFException => -1 }
      }
    } finally in.close()
    var changed = 0
    val out = new DataOutputStream(codec.compressedOutputStream(new FileOutputStream(delta)))
    try {
      records.foreach { case (k, v) =>
        out.writeInt(k.length); out.write(k)
        if (v == null) out.writeInt(-1)
        else {
          val w = rewrite(v)
          if (!java.util.Arrays.equals(w, v)) changed += 1
          out.writeInt(w.length); out.write(w)
        }
      }
      out.writeInt(-1)
    } finally out.close()
    new File(delta.getParentFile, s".${delta.getName}.crc").delete()
    new File(delta.getParentFile, s"${delta.getName}.crc").delete()
    changed
  }
}
