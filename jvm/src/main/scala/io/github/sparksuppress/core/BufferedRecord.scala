package io.github.sparksuppress.core

/** A record as the suppression buffer holds it: the key's latest value and timestamp, under its buffer time. */
trait BufferedRecord[K, V] {
  def key: K
  def value: V
  def timestamp: Long
  def bufferTime: Long
  def sizeBytes: Long
}
