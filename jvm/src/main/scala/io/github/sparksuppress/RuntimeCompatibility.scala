package io.github.sparksuppress

import java.util.Properties

/** Which library, Spark and Scala versions this jar is, and a check that the running JVM matches them. */
object RuntimeCompatibility {

  private lazy val buildInfo: Properties = {
    val p = new Properties()
    val in = getClass.getResourceAsStream("/io/github/sparksuppress/build-info.properties")
    if (in != null)
      try p.load(in)
      finally in.close()
    p
  }

  def libraryVersion: String = buildInfo.getProperty("version", "unknown")
  def builtForSpark: String = buildInfo.getProperty("spark.version", "unknown")
  def builtForScala: String = buildInfo.getProperty("scala.version", "unknown")

  private def minor(v: String): String = v.split('.').take(2).mkString(".")

  /** This jar's file name at another library version: spark-suppress_<spark line>_<scala>-<version>.jar. */
  def jarName(version: String): String = s"spark-suppress_${minor(builtForSpark)}_${minor(builtForScala)}-$version.jar"

  def runtimeSparkVersion: String = org.apache.spark.SPARK_VERSION

  def runtimeScalaVersion: String = scala.util.Properties.versionNumberString

  /**
   * Why a runtime with these Spark and Scala versions cannot run this jar, or None when it can: the Spark and Scala
   * minor versions must be those the jar was built for (Spark's internal APIs and Scala's binary interface change
   * between minor versions).
   */
  def incompatibility(sparkVersion: String, scalaVersion: String): Option[String] =
    if (minor(sparkVersion) == minor(builtForSpark) && minor(scalaVersion) == minor(builtForScala)) None
    else Some(
      s"spark-suppress $libraryVersion was built for Spark ${minor(builtForSpark)}.x on Scala " +
        s"${minor(builtForScala)}, but this JVM runs Spark $sparkVersion on Scala $scalaVersion. Use a Spark " +
        s"${minor(builtForSpark)}.x (Scala ${minor(builtForScala)}) runtime, or a spark-suppress build made " +
        "for your Spark version."
    )

  def check(): Unit =
    incompatibility(runtimeSparkVersion, runtimeScalaVersion).foreach(m => throw new IllegalStateException(m))
}
