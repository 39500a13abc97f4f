// Formatting only (make lint runs scalafmtCheckAll); nothing of it reaches the published jar.
addSbtPlugin("org.scalameta" % "sbt-scalafmt" % "2.5.6")
