// Scala 3 LTS. 3.3.8's compiler is on Maven Central but its scala3-sbt-bridge
// (and scaladoc) are not, so sbt cannot compile with it; 3.3.7 is the newest
// LTS release that is complete there.
ThisBuild / scalaVersion := "3.3.7"
ThisBuild / version      := "1.0.0"
ThisBuild / organization := "example.simpleauth"

// 2.8.5, not 2.8.8: Akka releases since October 2024 (2.8.8 among them) stop the actor system 15 minutes
// after start unless `akka.license-key` is set (README, "Versions"). LicenceSpec fails if that check comes back.
val AkkaVersion     = "2.8.5"
val AkkaHttpVersion = "10.5.3"
val ScalaTest       = "org.scalatest" %% "scalatest" % "3.2.19" % Test
val CompilerOptions = Seq("-deprecation", "-feature", "-unchecked", "-release", "21")

// ACCP ships its native library (AWS-LC) per platform: the build machine's architecture picks the jar, so
// an aarch64 build (a Docker build on arm, say) signs natively too. Same rule in all three JVM stacks:
// aarch64/arm64 -> linux-aarch_64 (Maven Central's name for it), anything else -> linux-x86_64 (where ACCP
// cannot load, the service logs a warning and the JDK signs).
val AccpClassifier = sys.props("os.arch") match {
  case "aarch64" | "arm64" => "linux-aarch_64"
  case _                   => "linux-x86_64"
}

lazy val root = (project in file("."))
  .settings(
    name := "simple-auth-akka",
    scalacOptions ++= CompilerOptions,
    javacOptions ++= Seq("--release", "21"),
    libraryDependencies ++= Seq(
      "com.typesafe.akka"  %% "akka-actor-typed"     % AkkaVersion,
      "com.typesafe.akka"  %% "akka-stream"          % AkkaVersion,
      "com.typesafe.akka"  %% "akka-slf4j"           % AkkaVersion,
      "com.typesafe.akka"  %% "akka-http"            % AkkaHttpVersion,
      "com.typesafe.akka"  %% "akka-http-spray-json" % AkkaHttpVersion,
      "com.zaxxer"          % "HikariCP"             % "7.1.0",
      "org.postgresql"      % "postgresql"           % "42.7.14",
      "com.nimbusds"        % "nimbus-jose-jwt"      % "10.10",
      "org.bouncycastle"    % "bcprov-jdk18on"       % "1.86",
      // RSA signing through AWS-LC (native), the same provider in all three JVM stacks: see NativeCrypto.
      ("software.amazon.cryptools" % "AmazonCorrettoCryptoProvider" % "2.5.0").classifier(AccpClassifier),
      // GET /metrics: Micrometer, the JVM's metrics facade (HikariCP and Spring use it), with its Prometheus registry.
      "io.micrometer"       % "micrometer-registry-prometheus" % "1.16.8",
      "ch.qos.logback"      % "logback-classic"      % "1.5.18",
      ScalaTest,
      "com.typesafe.akka"  %% "akka-http-testkit"        % AkkaHttpVersion % Test,
      // akka-http-testkit's route tests need akka-testkit (a "provided" dependency of it); akka-stream-testkit,
      // its other one, is not used here (and Maven Central has no 2.8.5 of it).
      "com.typesafe.akka"  %% "akka-testkit"             % AkkaVersion     % Test,
      "com.typesafe.akka"  %% "akka-actor-testkit-typed" % AkkaVersion     % Test
    ),
    // No API docs are built; skipping scaladoc keeps `package`/`assembly` lean.
    Compile / doc / sources := Nil,
    Test / fork := true,
    Test / javaOptions += "--enable-native-access=ALL-UNNAMED", // ACCP loads its native library
    Test / baseDirectory := baseDirectory.value,
    run / fork := true,
    Compile / mainClass := Some("simpleauth.App"),
    assembly / mainClass := Some("simpleauth.App"),
    assembly / assemblyJarName := "simple-auth-akka.jar",
    assembly / target := baseDirectory.value / "target",
    assembly / test := {},
    assembly / assemblyMergeStrategy := {
      case "reference.conf" | "application.conf"          => MergeStrategy.concat
      case "version.conf"                                  => MergeStrategy.concat
      case PathList("META-INF", "versions", _, "module-info.class") => MergeStrategy.discard
      case "module-info.class"                             => MergeStrategy.discard
      case PathList("META-INF", "services", _*)            => MergeStrategy.filterDistinctLines
      case PathList("META-INF", xs @ _*) if xs.lastOption.contains("MANIFEST.MF") => MergeStrategy.discard
      case PathList("META-INF", xs @ _*) if xs.lastOption.exists(n => n.endsWith(".SF") || n.endsWith(".DSA") || n.endsWith(".RSA")) => MergeStrategy.discard
      case PathList("META-INF", "INDEX.LIST")              => MergeStrategy.discard
      // bcprov is only used through its lightweight API (Argon2BytesGenerator),
      // not as a signed JCE provider, so dropping its jar signature is harmless.
      case x if x.endsWith(".proto")                       => MergeStrategy.first
      case x =>
        val old = (assembly / assemblyMergeStrategy).value
        old(x)
    }
  )

// The benchmark-only entry point (stack.json "signbench"), kept out of the service's jar: its own jar,
// target/simple-auth-akka-signbench.jar (SignBench alone), run with the service's jar on the class path.
// The root project does not aggregate it: `assembly` builds the service only, `signbench/package` this jar.
lazy val signbench = (project in file("signbench"))
  .dependsOn(root % "compile->compile;test->test")
  .settings(
    name := "simple-auth-akka-signbench",
    scalacOptions ++= CompilerOptions,
    libraryDependencies += ScalaTest,
    Compile / doc / sources := Nil,
    Compile / packageBin / artifactPath := (ThisBuild / baseDirectory).value / "target" / "simple-auth-akka-signbench.jar",
    Test / fork := true,
    Test / javaOptions += "--enable-native-access=ALL-UNNAMED",
    Test / baseDirectory := (ThisBuild / baseDirectory).value // the tests read ../spec
  )
