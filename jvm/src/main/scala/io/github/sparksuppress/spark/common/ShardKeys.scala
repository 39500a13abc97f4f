package io.github.sparksuppress.spark.common

import scala.util.hashing.MurmurHash3

import org.apache.spark.sql.catalyst.expressions.Murmur3HashFunction
import org.apache.spark.sql.api.java.UDF1
import org.apache.spark.sql.types.BinaryType

/**
 * Grouping keys for bounded buffers, which keep all keys of a shard in one state entry. Shard `i`'s grouping key is
 * chosen so that Spark's hash partitioning (Murmur3, seed 42, modulo the partition count) sends it to state partition
 * `i`: one shard per partition, so a buffer's bounds hold per state partition as Kafka's hold per task. Should
 * Spark's partitioning ever change, shards still work, just less evenly spread.
 */
private[sparksuppress] object ShardKeys {
  private val SparkHashSeed = 42L

  def forPartitions(numPartitions: Int): Array[Array[Byte]] = {
    require(numPartitions > 0, s"numPartitions must be > 0, got $numPartitions")
    val keys = new Array[Array[Byte]](numPartitions)
    var found = 0
    var candidate = 0
    while (found < numPartitions) {
      val bytes = java.nio.ByteBuffer.allocate(4).putInt(candidate).array()
      val p = partitionOf(bytes, numPartitions)
      if (keys(p) == null) { keys(p) = bytes; found += 1 }
      candidate += 1
    }
    keys
  }

  /** The state partition Spark assigns to a binary grouping key. */
  def partitionOf(key: Array[Byte], numPartitions: Int): Int = {
    val h = Murmur3HashFunction.hash(key, BinaryType, SparkHashSeed).toInt
    Math.floorMod(h, numPartitions)
  }

  /**
   * The shard a key belongs to (independent of the hash Spark uses, and stable across runs and Scala versions: the
   * seed is explicit because `bytesHash(data)` seeds differently on Scala 2.12).
   */
  def shardOf(keyBytes: Array[Byte], numShards: Int): Int =
    Math.floorMod(MurmurHash3.bytesHash(keyBytes, MurmurHash3.arraySeed), numShards)
}

/** Maps an encoded key to the grouping key of its shard. */
private[sparksuppress] final class ShardUdf(shards: Array[Array[Byte]]) extends UDF1[Array[Byte], Array[Byte]] {
  override def call(key: Array[Byte]): Array[Byte] = shards(ShardKeys.shardOf(key, shards.length))
}
