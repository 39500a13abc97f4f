package io.github.sparksuppress.spark.common

import java.nio.charset.StandardCharsets

import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/**
 * Hashes that stored state depends on, pinned to the values the first (Scala 2.13) releases stored, so that a
 * checkpoint moves between Scala versions (e.g. from Spark 3.5 on Scala 2.12 to Spark 4): the row codec's schema
 * descriptor and the key-to-shard mapping of bounded buffers and joins.
 */
class StoredHashesSuite extends AnyFunSuite {
  private def f(n: String, t: DataType) = StructField(n, t)

  test("the schema descriptor's type hashes are the same on every Scala version") {
    val inner = StructType(Seq(f("a", IntegerType), f("tags", MapType(StringType, ArrayType(DoubleType)))))
    val expected: Seq[(DataType, Int)] = Seq(
      IntegerType -> 1958052158,
      StringType -> -891985903,
      StructType(Nil) -> 473519988,
      StructType(Seq(f("a", IntegerType))) -> -1667163521,
      StructType(Seq(f("a", IntegerType), f("b", StringType))) -> -1307862220,
      StructType(Seq(f("a", IntegerType), f("b", StringType), f("c", LongType))) -> -15052326,
      StructType(Seq(f("x", DoubleType), f("x", DoubleType), f("x", DoubleType))) -> 543795795,
      ArrayType(StringType) -> 723570160,
      MapType(StringType, ArrayType(DoubleType)) -> -1798105041,
      inner -> 1152606148,
      ArrayType(inner) -> 553537367
    )
    for ((t, hash) <- expected) assert(RowCodec.typeHash(t) === hash, t.simpleString)
  }

  test("a key's shard is the same on every Scala version") {
    val alice = "alice".getBytes(StandardCharsets.UTF_8)
    assert(ShardKeys.shardOf(alice, 1000) === 682)
    assert(ShardKeys.shardOf(alice, 7) === 2)
  }
}
