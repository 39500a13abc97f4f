package io.github.sparksuppress.testkit

import java.io.File

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/**
 * Reads the Kafka-derived conformance vectors (directory from CONFORMANCE_DIR, default the repository's copy in
 * tests/conformance/vectors).
 */
object Vectors {
  private val mapper = new ObjectMapper()

  def directory: File = {
    val dir = sys.env.get("CONFORMANCE_DIR").map(new File(_)).getOrElse(new File("tests/conformance/vectors"))
    require(dir.isDirectory, s"conformance vectors not found at ${dir.getAbsolutePath}; set CONFORMANCE_DIR")
    dir
  }

  /** The chain vectors' directory (CHAINS_DIR, default tests/conformance/chains). */
  def chainsDirectory: File = {
    val dir = sys.env.get("CHAINS_DIR").map(new File(_)).getOrElse(new File("tests/conformance/chains"))
    require(dir.isDirectory, s"chain vectors not found at ${dir.getAbsolutePath}; set CHAINS_DIR")
    dir
  }

  def family(fileName: String): Seq[JsonNode] = familyIn(directory, fileName)

  def familyIn(dir: File, fileName: String): Seq[JsonNode] = {
    val root = mapper.readTree(new File(dir, fileName))
    root.get("vectors").elements().asScala.toList
  }

  def longOrMax(node: JsonNode): Long =
    if (node == null || node.isNull) Long.MaxValue else node.asLong()

  def textOrNull(node: JsonNode): String =
    if (node == null || node.isNull) null else node.asText()

  def array(node: JsonNode): Seq[JsonNode] =
    if (node == null || node.isNull) Seq.empty else node.elements().asScala.toList
}
