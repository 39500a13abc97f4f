package io.github.sparksuppress.spark.common

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.types.{LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

/** The map side's key table against what a `java.util.HashMap` of copied rows would answer. */
class KeyTableSuite extends AnyFunSuite {

  private val stringAndLong =
    UnsafeProjection.create(Seq(BoundReference(0, StringType, nullable = true), BoundReference(1, LongType, true)))
  private val longOnly = UnsafeProjection.create(Seq(BoundReference(0, LongType, nullable = true)))

  private def key(s: String, n: java.lang.Long): UnsafeRow =
    stringAndLong(InternalRow(if (s == null) null else UTF8String.fromString(s), n))

  test("finds each key added, under the entry numbered in the order of adding, and no other key") {
    val random = new Random(7)
    // Strings of 0 to 40 characters (rows of different lengths), nulls, and repeats that must not be added twice.
    val keys = (0 until 20000).map { i =>
      val s = if (i % 97 == 0) null else random.alphanumeric.take(random.nextInt(41)).mkString
      (s, if (i % 89 == 0) null else java.lang.Long.valueOf(random.nextInt(500).toLong))
    }
    val table = new KeyTable[String](4) // far too small: slots, entries and key bytes all grow
    val reference = new java.util.HashMap[UnsafeRow, Integer]()
    keys.foreach { case (s, n) =>
      val row = key(s, n)
      val found = table.find(row)
      val expected = reference.get(row)
      assert(found === (if (expected == null) -1 else expected.intValue), (s, n))
      if (found < 0) {
        val entry = table.add(row, s"$s/$n")
        assert(entry === reference.size())
        reference.put(row.copy(), entry)
      }
    }
    assert(table.size === reference.size())
    assert(table.size > 19000, "the keys were meant to be mostly distinct")
    reference.forEach { (row, entry) =>
      assert(table.find(row) === entry.intValue)
      val read = table.key(entry, new UnsafeRow(2))
      assert(read === row)
      val s = if (row.isNullAt(0)) null else row.getUTF8String(0).toString
      assert(table.value(entry) === s"$s/${if (row.isNullAt(1)) null else row.getLong(1)}")
    }
    assert(table.find(key("not added: longer than any key above, 0123456789", 1L)) === -1)
  }

  test("keys with the same hash are told apart by their bytes") {
    // Among 300,000 longs spread over all 64 bits, 32-bit hashes collide about ten times (a long below 2^32 varies
    // one of the row's 32-bit words only, which Murmur maps one to one).
    val byHash = new java.util.HashMap[Integer, java.lang.Long]()
    val pair = (0L until 300000L).iterator.map(_ * 0x9e3779b97f4a7c15L).map { n =>
      val h = longOnly(InternalRow(n)).hashCode
      Option(byHash.putIfAbsent(h, n)).map(first => (first.longValue, n))
    }.collectFirst { case Some(p) => p }
    assert(pair.isDefined, "no two of 300,000 keys share a hash: the test needs a pair that does")
    val (a, b) = pair.get
    assert(longOnly(InternalRow(a)).hashCode === longOnly(InternalRow(b)).hashCode)
    val table = new KeyTable[String](16)
    val ea = table.add(longOnly(InternalRow(a)), "a")
    assert(table.find(longOnly(InternalRow(b))) === -1)
    val eb = table.add(longOnly(InternalRow(b)), "b")
    assert(ea !== eb)
    assert(table.value(table.find(longOnly(InternalRow(a)))) === "a")
    assert(table.value(table.find(longOnly(InternalRow(b)))) === "b")
  }

  test("a key read back stays valid while the table is only read") {
    val table = new KeyTable[String](2)
    (0 until 100).foreach(i => table.add(key(s"key-$i", i.toLong), s"v$i"))
    val rows = (0 until 100).map(e => table.key(e, new UnsafeRow(2)))
    rows.zipWithIndex.foreach { case (row, i) =>
      assert(row.getUTF8String(0).toString === s"key-$i")
      assert(row.getLong(1) === i.toLong)
    }
  }

  test("string keys: found by their bytes, read back as the same strings") {
    val strings = Seq("", "a", "A", "a ", "ä", "日本語のキー", "k0000001", "k0000001x") ++ (0 until 3000).map(i => s"k$i")
    val table = new KeyTable[String](8)
    strings.zipWithIndex.foreach { case (s, i) =>
      assert(table.find(UTF8String.fromString(s)) === -1, s)
      assert(table.add(UTF8String.fromString(s), s) === i)
    }
    strings.zipWithIndex.foreach { case (s, i) =>
      // A string that is a view into a larger array, as a column of an input row is.
      val view = UTF8String.fromBytes(s"<<$s>>".getBytes("UTF-8"), 2, s.getBytes("UTF-8").length)
      assert(table.find(view) === i, s)
      assert(table.stringKey(i).toString === s)
      assert(table.value(i) === s)
    }
    assert(table.find(UTF8String.fromString("k3000")) === -1)
  }

  test("refuses a size that is not positive") {
    val e = intercept[IllegalArgumentException](new KeyTable[String](0))
    assert(e.getMessage.contains("expectedKeys must be positive, got 0"))
  }
}
