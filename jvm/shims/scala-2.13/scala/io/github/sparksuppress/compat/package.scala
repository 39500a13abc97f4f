package io.github.sparksuppress

// Scala 2.13 renamed TraversableOnce to IterableOnce (Scala 2.12: shims/scala-2.12); Spark's Generator.eval
// returns the Scala version's own.
package object compat {
  type IterableOnce[+A] = scala.collection.IterableOnce[A]

  /**
   * `f(0)` to `f(n - 1)`, computed in that order, as the Scala version's default `IndexedSeq`: an array wrapped as it
   * is. A chain's function runs once per key and micro-batch, and there `indices.map` (a `Vector` builder) and
   * `Array.tabulate` (a `ClassTag` looked up anew each time) cost more than the few elements they hold.
   */
  def tabulate[A <: AnyRef](n: Int)(f: Int => A): IndexedSeq[A] = {
    val a = new Array[AnyRef](n)
    var i = 0
    while (i < n) { a(i) = f(i); i += 1 }
    scala.collection.immutable.ArraySeq.unsafeWrapArray(a).asInstanceOf[IndexedSeq[A]]
  }
}
