import scala.sys.process._

// One version number for the jars and the Python package: the VERSION file at the top of the repository.
ThisBuild / version := IO.read(file("VERSION")).trim
ThisBuild / scalaVersion := SparkLines.default.scalaVersion
ThisBuild / organization := "io.github.spark-suppress"

// ---- Spark lines (project/SparkLines.scala; docs/architecture.md, "Spark lines") ----
// One project per Spark line and Scala version, each compiling the shared sources under jvm/src plus the shim
// folders under jvm/shims that its line selects, against that line's own Spark. `make jar SPARK=4.0` builds one
// (`build/sbt spark40_213/package`), `make jars` all of them.

/** Where a line's Spark jars are: the PySpark wheel in its venv, or $SPARK_JARS_DIR for the line being built. */
def wheelJars(line: SparkLine, base: File): Seq[File] = {
  val dir = sys.env.get("SPARK_JARS_DIR").filter(_ => sys.env.get("SPARK_LINE").contains(line.id)).map(file).getOrElse {
    val candidates = (base / line.venv / "lib" * "python3*" / "site-packages" / "pyspark" / "jars").get
    candidates.headOption.getOrElse(base / line.venv / "pyspark-jars-not-installed")
  }
  if (!dir.isDirectory)
    sys.error(s"Spark ${line.sparkVersion} jars not found at $dir: run `make venv SPARK=${line.line}` (installs " +
      s"pyspark==${line.pyspark.get} into ${line.venv}) or set SPARK_JARS_DIR and SPARK_LINE=${line.id}")
  val scalaLibrary = (dir * "scala-library-*.jar").get.map(_.getName)
  if (!scalaLibrary.contains(s"scala-library-${line.scalaVersion}.jar"))
    sys.error(s"$dir holds ${scalaLibrary.mkString(", ")}, but Spark line ${line.id} is built with Scala " +
      s"${line.scalaVersion}: update project/SparkLines.scala to the Scala version of Spark ${line.sparkVersion}")
  // sbt supplies the Scala library itself; Spark's copy would only duplicate it.
  (dir * "*.jar").get.filterNot(_.getName.matches("scala-(library|reflect|compiler)-.*"))
}

/**
 * Spark Connect's server classes where a line's distribution lacks them: Spark 3.5 ships Connect as the separate
 * spark-connect artifact. Maven Central here serves spark-connect_2.12 up to 3.5.7 (not 3.5.8 or 3.5.9) and no
 * spark-connect_2.13 of the 3.5 line, so the 3.5/2.12 plugin is compiled and tested against 3.5.7's (a 3.5 patch
 * release: the plugin interfaces are the same) and the 3.5/2.13 jar has no Connect plugin (docs/connect.md).
 */
val connect35 = "3.5.7"

def hasConnect(line: SparkLine): Boolean = !(line.line == "3.5" && line.scalaBinary == "2.13")

def lineProject(line: SparkLine): Project = Project(line.id, file("target") / "projects" / line.id)
  .settings(
    name := line.artifactName,
    moduleName := line.artifactName,
    scalaVersion := line.scalaVersion,
    target := (LocalRootProject / baseDirectory).value / "target" / line.id,
    // jvm/src/main (every line), its shims, and the Spark Connect plugin (jvm/connect) with its own shims.
    Compile / unmanagedSourceDirectories := {
      val base = (LocalRootProject / baseDirectory).value / "jvm"
      def shims(dir: File): Seq[File] =
        Option((dir / "shims").listFiles).toSeq.flatten.filter(_.isDirectory).filter(d => line.selectsShim(d.getName))
          .sortBy(_.getName).flatMap(d => Seq(d / "scala", d / "java"))
      Seq(base / "src" / "main" / "scala", base / "src" / "main" / "java") ++ shims(base) ++
        (if (hasConnect(line)) Seq(base / "connect" / "scala", base / "connect" / "java") ++ shims(base / "connect")
        else Nil)
    },
    Compile / resourceDirectory := (LocalRootProject / baseDirectory).value / "jvm" / "src" / "main" / "resources",
    Test / unmanagedSourceDirectories := {
      val base = (LocalRootProject / baseDirectory).value / "jvm"
      // benchmarks/jvm/localfs: Hadoop's local file system without its child processes, for quick checkpoints.
      Seq(base / "src" / "test" / "scala", base.getParentFile / "benchmarks" / "jvm" / "localfs") ++
        (if (hasConnect(line)) Seq(base / "connect" / "test" / "scala") else Nil)
    },
    Test / resourceDirectory := (LocalRootProject / baseDirectory).value / "jvm" / "src" / "test" / "resources",
    Compile / unmanagedJars ++= (line.pyspark match {
      case Some(_) => wheelJars(line, (LocalRootProject / baseDirectory).value).map(Attributed.blank)
      case None => Nil
    }),
    libraryDependencies ++= Seq("org.scalatest" %% "scalatest" % "3.2.19" % Test) ++
      (if (line.pyspark.isEmpty) Seq("org.apache.spark" %% "spark-sql" % line.sparkVersion % Provided) else Nil) ++
      (if (line.line == "3.5" && hasConnect(line))
        Seq("org.apache.spark" %% "spark-connect" % connect35 % Provided intransitive ())
      else Nil),
    Compile / resourceGenerators += Def.task {
      val out = (Compile / resourceManaged).value / "io" / "github" / "sparksuppress" / "build-info.properties"
      IO.write(out, s"version=${version.value}\nspark.version=${line.sparkVersion}\nscala.version=${scalaVersion.value}\n" +
        s"spark.line=${line.line}\n")
      Seq(out)
    }.taskValue,
    // Spark runs in a forked JVM with the module openings spark-submit adds on Java 17. The tests run many short
    // micro-batches, so the optimising JIT compiler and a parallel collector cost more CPU than they save: with the
    // client compiler and the serial collector the Scala suites take a third less CPU (tests/session_conf.py says the
    // same for the Python tests' JVMs; `make test` on 2 cores is bound by CPU).
    Test / fork := true,
    Test / javaOptions ++= Seq("-Xmx3g", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
      "-XX:+IgnoreUnrecognizedVMOptions", "-Duser.timezone=UTC",
      "-Djdk.reflect.useDirectMethodHandle=false", "-Dio.netty.tryReflectionSetAccessible=true") ++
      Seq("java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio", "java.util",
        "java.util.concurrent", "java.util.concurrent.atomic", "jdk.internal.ref", "sun.nio.ch", "sun.nio.cs",
        "sun.security.action", "sun.util.calendar").map(p => s"--add-opens=java.base/$p=ALL-UNNAMED"),
    Test / baseDirectory := (LocalRootProject / baseDirectory).value,
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    // `make test` on every line runs the whole Scala suite on the default line and, on the others (tests/lines.py
    // names them here), the suites that pin Spark's and Scala's behaviour: the probes, the stored hashes and the
    // Connect plugin's (project/ProbeSources.scala). Those lines compile only these suites and the test sources they
    // use: the whole test tree cost about 70 CPU-seconds a line. `make test SPARK=<line>` and `make reliability` run
    // every suite on any line.
    Test / unmanagedSources := {
      val all = (Test / unmanagedSources).value
      if (ProbeSources.only(line)) ProbeSources.closure(all) else all
    },
    Test / testOptions ++= (if (ProbeSources.only(line)) Seq(Tests.Filter(ProbeSources.isProbe)) else Nil),
    // Spark from a wheel is compiled against unmanaged jars (above); the published POM still declares it, as
    // "provided". So is the Spark Connect server, whose plugin interfaces jvm/connect implements (docs/connect.md).
    // Spark from Maven Central (and 3.5's Connect) is a "provided" library dependency, in the POM already.
    pomPostProcess := { (node: scala.xml.Node) =>
      val sparkSql = if (line.pyspark.isEmpty) Nil else
        <dependency>
          <groupId>org.apache.spark</groupId>
          <artifactId>spark-sql_{line.scalaBinary}</artifactId>
          <version>{line.sparkVersion}</version>
          <scope>provided</scope>
        </dependency>
      val sparkConnect = if (!hasConnect(line) || line.line == "3.5") Nil else
        <dependency>
          <groupId>org.apache.spark</groupId>
          <artifactId>spark-connect_{line.scalaBinary}</artifactId>
          <version>{line.sparkVersion}</version>
          <scope>provided</scope>
        </dependency>
      val spark = sparkSql ++ sparkConnect
      new scala.xml.transform.RuleTransformer(new scala.xml.transform.RewriteRule {
        override def transform(n: scala.xml.Node): Seq[scala.xml.Node] = n match {
          case e: scala.xml.Elem if e.label == "dependencies" => e.copy(child = e.child ++ spark)
          // Users' Spark brings its Scala library: the jar needs it, but must not pull in a copy of its own.
          case e: scala.xml.Elem if e.label == "dependency" && (e \ "artifactId").text == "scala-library" =>
            e.copy(child = e.child ++ <scope>provided</scope>)
          case other => other
        }
      }).transform(node).head
    },
    licenses := Seq("Apache-2.0" -> url("https://www.apache.org/licenses/LICENSE-2.0")),
    scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-release", "17"),
  )

def lineProject(id: String): Project =
  lineProject(SparkLines.all.find(_.id == id).getOrElse(sys.error(s"no Spark line $id in project/SparkLines.scala")))

// `tests/lines.py` runs every line's tests in one sbt (`all spark35_212/test ...`): this many test JVMs at once.
// (sbt's own defaults limit forked test groups to one, so the list replaces them.)
Global / concurrentRestrictions := Seq(
  Tags.limitAll(math.max(2, java.lang.Runtime.getRuntime.availableProcessors)),
  Tags.limit(Tags.ForkedTestGroup, sys.env.getOrElse("SBT_TEST_FORKS", "1").toInt),
  Tags.exclusiveGroup(Tags.Clean))

// One val per line (sbt finds projects by their vals); SparkLinesCheck below fails the build if one is missing.
lazy val spark35_212 = lineProject("spark35_212")
lazy val spark35_213 = lineProject("spark35_213")
lazy val spark40_213 = lineProject("spark40_213")
lazy val spark41_213 = lineProject("spark41_213")
lazy val spark42_213 = lineProject("spark42_213")
lazy val spark43_213 = lineProject("spark43_213")

// `make publish-local`: every line's artifact into ~/.ivy2/local and ~/.m2.
addCommandAlias("publishLocalAllLines", SparkLines.all.map(l => s"${l.id}/publishLocal;${l.id}/publishM2").mkString(";"))

/** Prints the lines as `id line spark scala pyspark venv connect`, one a line: the Makefile reads its table here. */
lazy val sparkLines = taskKey[Unit]("lists the Spark lines the build knows")

// The root builds nothing itself: `build/sbt spark43_213/test` (or `make test-jvm SPARK=4.3`) picks a line.
lazy val root = (project in file("."))
  .settings(
    publish / skip := true, Compile / sources := Nil, Test / sources := Nil,
    sparkLines := {
      val defined = Set(spark35_212, spark35_213, spark40_213, spark41_213, spark42_213, spark43_213).map(_.id)
      val missing = SparkLines.all.map(_.id).filterNot(defined)
      if (missing.nonEmpty) sys.error(s"build.sbt has no project for ${missing.mkString(", ")}: add a lazy val each")
      SparkLines.all.foreach { l =>
        println(s"${l.id} ${l.line} ${l.sparkVersion} ${l.scalaVersion} ${l.pyspark.getOrElse("-")} ${l.venv} ${hasConnect(l)}")
      }
    },
  )

// ---- benchmarks (benchmarks/README.md) ----
// A separate project that nothing aggregates or depends on, so JMH and Kafka Streams never reach the published
// jar, its POM or the wheel. It compiles the pure core's sources itself (they import nothing from Spark), which
// keeps Spark's jars off the microbenchmark's classpath.
val jmhVersion = "1.37"
val kafkaVersion = "4.3.1"

lazy val bench = (project in file("benchmarks/jvm"))
  .settings(
    name := "spark-suppress-benchmarks",
    publish / skip := true,
    Compile / unmanagedSourceDirectories ++= {
      val jvm = (LocalRootProject / baseDirectory).value / "jvm"
      // The core's sources, and the Scala version's collection shim (compat) that they use.
      Seq(
        jvm / "src" / "main" / "scala" / "io" / "github" / "sparksuppress" / "core",
        jvm / "shims" / s"scala-${scalaBinaryVersion.value}" / "scala",
      )
    },
    libraryDependencies ++= Seq(
      "org.openjdk.jmh" % "jmh-core" % jmhVersion,
      "org.openjdk.jmh" % "jmh-generator-annprocess" % jmhVersion,
      "org.apache.kafka" % "kafka-streams" % kafkaVersion,
      // Kafka's own test fixture for hosting a state store outside a running topology (its buffer tests use it).
      "org.apache.kafka" % "kafka-streams" % kafkaVersion classifier "test",
      "org.apache.kafka" % "kafka-streams-test-utils" % kafkaVersion,
    ),
    // JMH generates its harness from the @Benchmark classes (Java sources) with this annotation processor.
    javacOptions ++= Seq("-processor", "org.openjdk.jmh.generators.BenchmarkProcessor"),
    scalacOptions ++= Seq("-deprecation", "-feature", "-release", "17"),
    Compile / resourceGenerators += Def.task {
      val out = (Compile / resourceManaged).value / "benchmark-versions.properties"
      IO.write(out, s"kafka.streams.version=$kafkaVersion\njmh.version=$jmhVersion\n")
      Seq(out)
    }.taskValue,
  )
// ---- end of benchmarks ----
