package io.github.sparksuppress

// Scala 2.13 renamed TraversableOnce to IterableOnce (shims/scala-2.13); Spark's Generator.eval returns the
// Scala version's own.
package object compat {
  type IterableOnce[+A] = scala.collection.TraversableOnce[A]
}
