package io.github.sparksuppress.core.chain

import io.github.sparksuppress.core.KeyOps

/** A suppress buffer's key inside a chain: the record's key and, below a windowed aggregation, its window. */
final case class WindowedKey[K](key: K, window: WindowBounds)

object WindowedKey {

  /**
   * Kafka's order of windowed keys in a suppress buffer (it breaks ties between equal buffer times): the key, then
   * the window's start (time windows serialize key + start), then its end (session windows add it).
   */
  implicit def keyOps[K](implicit keys: KeyOps[K]): KeyOps[WindowedKey[K]] = new KeyOps[WindowedKey[K]] {
    def hash(k: WindowedKey[K]): Int = {
      val h = keys.hash(k.key)
      if (k.window == null) h
      else 31 * (31 * h + java.lang.Long.hashCode(k.window.start)) + java.lang.Long.hashCode(k.window.end)
    }
    def same(a: WindowedKey[K], b: WindowedKey[K]): Boolean = keys.same(a.key, b.key) && a.window == b.window
    def compare(a: WindowedKey[K], b: WindowedKey[K]): Int = {
      val c = keys.compare(a.key, b.key)
      if (c != 0 || a.window == null || b.window == null) c
      else {
        val s = java.lang.Long.compare(a.window.start, b.window.start)
        if (s != 0) s else java.lang.Long.compare(a.window.end, b.window.end)
      }
    }
  }
}
