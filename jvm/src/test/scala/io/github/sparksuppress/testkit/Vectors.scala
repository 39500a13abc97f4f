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

  /**
   * The chain vectors' directory: the first of CHAINS_DIR's folders (several joined by ':', as the conformance runner
   * takes them) that holds chains.json; default tests/conformance/chains.
   */
  def chainsDirectory: File = {
    val dirs = sys.env.get("CHAINS_DIR").map(_.split(File.pathSeparator).toSeq.filter(_.nonEmpty).map(new File(_)))
      .getOrElse(Seq(new File("tests/conformance/chains")))
    dirs.find(d => new File(d, "chains.json").isFile).getOrElse(throw new IllegalArgumentException(
      s"chain vectors (chains.json) not found in ${dirs.map(_.getAbsolutePath).mkString(", ")}; set CHAINS_DIR"
    ))
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
