import scala.sys.process._

// One version number for the jar and the Python package: the VERSION file at the top of the repository.
ThisBuild / version := IO.read(file("VERSION")).trim
ThisBuild / scalaVersion := "2.13.18"
ThisBuild / organization := "io.github.spark-suppress"

val sparkVersion = "4.3.0"

/** Spark's jars: $SPARK_JARS_DIR, else the pyspark wheel in the project's .venv. */
lazy val sparkJars = Def.setting {
  val dir = sys.env.get("SPARK_JARS_DIR").map(file).getOrElse {
    val candidates = (baseDirectory.value / ".venv" / "lib" * "python3*" / "site-packages" / "pyspark" / "jars").get
    candidates.headOption.getOrElse(baseDirectory.value / ".venv" / "pyspark-jars-not-installed")
  }
  if (!dir.isDirectory) sys.error(s"Spark jars not found at $dir: run `make venv` (installs pyspark==$sparkVersion) or set SPARK_JARS_DIR")
  // sbt supplies the Scala library itself; Spark's copy would only duplicate it.
  (dir * "*.jar").get.filterNot(_.getName.matches("scala-(library|reflect|compiler)-.*")).map(Attributed.blank)
}

lazy val root = (project in file("."))
  .settings(
    name := "spark-suppress",
    Compile / scalaSource := baseDirectory.value / "jvm" / "src" / "main" / "scala",
    Compile / resourceDirectory := baseDirectory.value / "jvm" / "src" / "main" / "resources",
    Test / scalaSource := baseDirectory.value / "jvm" / "src" / "test" / "scala",
    Test / resourceDirectory := baseDirectory.value / "jvm" / "src" / "test" / "resources",
    // Spark 4.3.0 is not on Maven Central; compile and test against the jars PySpark 4.3.0 bundles, which are
    // exactly what users run. They stay off the published jar and POM (see pomPostProcess below).
    Compile / unmanagedJars ++= sparkJars.value,
    libraryDependencies ++= Seq(
      "org.scalatest" %% "scalatest" % "3.2.19" % Test,
    ),
    Compile / resourceGenerators += Def.task {
      val out = (Compile / resourceManaged).value / "io" / "github" / "sparksuppress" / "build-info.properties"
      IO.write(out, s"version=${version.value}\nspark.version=$sparkVersion\nscala.version=${scalaVersion.value}\n")
      Seq(out)
    }.taskValue,
    // Spark runs in a forked JVM with the module openings spark-submit adds on Java 17.
    Test / fork := true,
    Test / javaOptions ++= Seq("-Xmx3g", "-XX:+IgnoreUnrecognizedVMOptions", "-Duser.timezone=UTC",
      "-Djdk.reflect.useDirectMethodHandle=false", "-Dio.netty.tryReflectionSetAccessible=true") ++
      Seq("java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio", "java.util",
        "java.util.concurrent", "java.util.concurrent.atomic", "jdk.internal.ref", "sun.nio.ch", "sun.nio.cs",
        "sun.security.action", "sun.util.calendar").map(p => s"--add-opens=java.base/$p=ALL-UNNAMED"),
    Test / baseDirectory := baseDirectory.value,
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    // Spark is compiled against unmanaged jars (above); the published POM still declares it, as "provided".
    pomPostProcess := { (node: scala.xml.Node) =>
      val spark =
        <dependency>
          <groupId>org.apache.spark</groupId>
          <artifactId>spark-sql_2.13</artifactId>
          <version>{sparkVersion}</version>
          <scope>provided</scope>
        </dependency>
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
    Compile / unmanagedSourceDirectories +=
      (LocalRootProject / baseDirectory).value / "jvm" / "src" / "main" / "scala" / "io" / "github" / "sparksuppress" / "core",
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
