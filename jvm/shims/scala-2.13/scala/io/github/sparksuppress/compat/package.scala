package io.github.sparksuppress

// Scala 2.13 renamed TraversableOnce to IterableOnce (Scala 2.12: shims/scala-2.12); Spark's Generator.eval
// returns the Scala version's own.
package object compat {
  type IterableOnce[+A] = scala.collection.IterableOnce[A]
}
