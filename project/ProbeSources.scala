import java.io.File
import java.nio.file.Files

/**
 * The Scala suites `make test` runs on the lines other than the default (tests/lines.py names those lines in
 * SPARK_SUPPRESS_TEST_PROBES_ONLY): the suites that pin Spark's and Scala's behaviour. On those lines only their
 * sources, and the test sources they use, are compiled.
 */
object ProbeSources {
  val suites: Seq[String] = Seq("ProbeSuite", "StoredHashesSuite", "ConnectPluginSuite")

  def isProbe(suiteName: String): Boolean = suites.exists(suiteName.endsWith)

  /**
   * Whether `line` runs only the probes: SPARK_SUPPRESS_TEST_PROBES_ONLY names its project. Refuses names that are not
   * projects.
   */
  def only(line: SparkLine): Boolean = {
    val named = sys.env.getOrElse("SPARK_SUPPRESS_TEST_PROBES_ONLY", "").split(",").filter(_.nonEmpty).toSet
    val known = SparkLines.all.map(_.id)
    // A line name (3.5_2.12) instead of a project id would silently run every suite.
    val unknown = named -- known
    if (unknown.nonEmpty)
      sys.error(
        s"SPARK_SUPPRESS_TEST_PROBES_ONLY names ${unknown.mkString(", ")}, which are not sbt projects; give " +
          s"project ids, e.g. ${known.mkString(",")}"
      )
    named.contains(line.id)
  }

  private val Definition = """\b(?:class|object|trait|interface|enum)\s+([A-Za-z_]\w*)""".r
  private val Word = """\w+""".r

  /**
   * The probe suites' files among `sources` and every file they use, directly or not: a file is used when an included
   * file names something it defines. Names in comments count too, which at worst compiles a file more.
   */
  def closure(sources: Seq[File]): Seq[File] = {
    val text = sources.map(f => f -> new String(Files.readAllBytes(f.toPath), "UTF-8")).toMap
    val defines = text.map { case (f, t) => f -> Definition.findAllMatchIn(t).map(_.group(1)).toSet }
    val words = text.map { case (f, t) => f -> Word.findAllIn(t).toSet }
    val included = scala.collection.mutable.Set(sources.filter(f => isProbe(f.getName.stripSuffix(".scala"))): _*)
    var frontier = included.toList
    while (frontier.nonEmpty) {
      val named = frontier.flatMap(words).toSet
      frontier = sources.filter(f => !included.contains(f) && defines(f).exists(named)).toList
      included ++= frontier
    }
    sources.filter(included.contains)
  }
}
