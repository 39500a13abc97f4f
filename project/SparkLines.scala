import sbt._

/**
 * One Spark line the library is built for: one sbt project, one jar, one artifact (`spark-suppress_<line>_<scala>`,
 * named as Delta Lake and Sedona name theirs).
 *
 * @param line         the Spark minor line, e.g. "4.0"
 * @param sparkVersion the newest patch release of the line, compiled and tested against
 * @param scalaVersion the Scala patch version that Spark release was built with (Scala 2.13 is not forward
 *                     binary compatible across patch releases, so the jar must not be compiled with a newer one)
 * @param pyspark      the PySpark release whose bundled jars are compiled against and tested on (what Python users
 *                     run); None where no PySpark wheel carries the line's Scala version, and Spark comes from
 *                     Maven Central instead
 */
final case class SparkLine(line: String, sparkVersion: String, scalaVersion: String, pyspark: Option[String]) {

  def scalaBinary: String = scalaVersion.split('.').take(2).mkString(".")

  /** The sbt project id, e.g. spark40_213. */
  def id: String = s"spark${line.replace(".", "")}_${scalaBinary.replace(".", "")}"

  /** The artifact name before sbt's Scala suffix: spark-suppress_4.0 becomes spark-suppress_4.0_2.13. */
  def artifactName: String = s"spark-suppress_$line"

  /** The venv holding this line's PySpark (the Makefile creates it); the default line keeps the plain `.venv`. */
  def venv: String = if (this == SparkLines.default) ".venv" else s".venv-$line"

  /**
   * The shim folders under jvm/shims this line compiles, by name: `spark-A` (line A only), `spark-A-B` (lines A to
   * B) and `spark-A-up` (A and every later line), plus `scala-2.12` / `scala-2.13` by Scala version. Each folder
   * holds the code for one side of one Spark (or Scala) change; see docs/architecture.md.
   */
  def selectsShim(folder: String): Boolean = {
    val Exact = """spark-(\d+\.\d+)""".r
    val Range = """spark-(\d+\.\d+)-(\d+\.\d+)""".r
    val From = """spark-(\d+\.\d+)-up""".r
    val ScalaDir = """scala-(\d+\.\d+)""".r
    folder match {
      case Exact(a) => SparkLines.order(line) == SparkLines.order(a)
      case Range(a, b) => SparkLines.order(a) <= SparkLines.order(line) && SparkLines.order(line) <= SparkLines.order(b)
      case From(a) => SparkLines.order(a) <= SparkLines.order(line)
      case ScalaDir(s) => s == scalaBinary
      case other => sys.error(s"jvm/shims/$other: a shim folder is named spark-A, spark-A-B, spark-A-up or scala-X.Y")
    }
  }
}

object SparkLines {
  /** The table in project/spark-lines.tsv, in its order (oldest line first); its last row is the default line. */
  val all: Seq[SparkLine] =
    IO.readLines(file("project") / "spark-lines.tsv").map(_.trim).filter(l => l.nonEmpty && !l.startsWith("#"))
      .map(_.split("\\s+")).map {
        case Array(line, scala, spark, pyspark) =>
          SparkLine(line, spark, scala, if (pyspark == "-") None else Some(pyspark))
        case other => sys.error(s"project/spark-lines.tsv: a row is `line scala spark pyspark`, not ${other.mkString(" ")}")
      }

  val default: SparkLine = all.last

  private[this] val lines = all.map(_.line).distinct

  def order(line: String): Int = {
    val i = lines.indexOf(line)
    if (i < 0) sys.error(s"Spark line $line is not one of ${lines.mkString(", ")} (project/spark-lines.tsv)")
    i
  }
}
