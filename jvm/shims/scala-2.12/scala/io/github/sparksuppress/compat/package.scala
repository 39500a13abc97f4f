package io.github.sparksuppress

// Scala 2.13 renamed TraversableOnce to IterableOnce (shims/scala-2.13); Spark's Generator.eval returns the
// Scala version's own.
package object compat {
  type IterableOnce[+A] = scala.collection.TraversableOnce[A]

  /** `f(0)` to `f(n - 1)`, computed in that order, as an array wrapped as it is (shims/scala-2.13 says why). */
  def tabulate[A <: AnyRef](n: Int)(f: Int => A): IndexedSeq[A] = {
    val a = new Array[AnyRef](n)
    var i = 0
    while (i < n) { a(i) = f(i); i += 1 }
    scala.Predef.wrapRefArray(a).asInstanceOf[IndexedSeq[A]]
  }
}
