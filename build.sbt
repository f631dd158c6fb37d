// The two Scala stacks and the module they share, in one sbt build:
//   core           scala-core/       the framework-neutral jobs: settings, keys and signer, password hashes, request
//                                    parsing, refresh tokens, client addresses, native crypto (no akka, no zio)
//   akka, zio      akka/, zio/       each stack's HTTP, effect and database layers; a fat jar each (`assembly`)
//   akkaSignbench, zioSignbench      the benchmark's signing entry point, a thin jar of its own per stack
// Each stack's stack.json runs this build from its own folder (`../sbt -batch akka/assembly ...`).

// Scala 3 LTS. 3.3.8's compiler is on Maven Central but its scala3-sbt-bridge (and scaladoc) are not, so sbt cannot
// compile with it; 3.3.7 is the newest LTS release that is complete there.
ThisBuild / scalaVersion := "3.3.7"
ThisBuild / version      := "1.0.0"
ThisBuild / organization := "example.simpleauth"

// The root project is only the build's home: it builds and publishes nothing.
lazy val root = (project in file("."))
  .settings(publish / skip := true, Compile / sources := Nil, Test / sources := Nil)

// 2.8.5, not 2.8.8: Akka releases since October 2024 (2.8.8 among them) stop the actor system 15 minutes after start
// unless `akka.license-key` is set (akka/README.md, "Versions"). akka's LicenceSpec fails if that check comes back.
val AkkaVersion       = "2.8.5"
val AkkaHttpVersion   = "10.5.3"
val ZioVersion        = "2.1.26"
val ZioHttpVersion    = "3.11.3"
val ZioLoggingVersion = "2.5.3"

val ScalaTest = "org.scalatest" %% "scalatest" % "3.2.19" % Test
val HikariCP  = "com.zaxxer"     % "HikariCP"   % "7.1.0"
val Postgres  = "org.postgresql" % "postgresql" % "42.7.14"

// ACCP ships its native library (AWS-LC) per platform, as linux-x86_64 and linux-aarch_64 (sic) jars on Maven
// Central. The classifier follows the machine that builds (os.arch), so an arm64 build (a Docker build on arm
// included) signs natively too; on any other architecture the x86-64 jar is taken and the service, finding no
// loadable library, signs with the JDK and says so at start. The same rule in all three JVM stacks.
val AccpClassifier = sys.props.getOrElse("os.arch", "") match {
  case "aarch64" | "arm64" => "linux-aarch_64"
  case _                   => "linux-x86_64"
}

// Every project: Java 21 bytecode, no API docs (scaladoc_3 for 3.3.7 is not on Maven Central), tests forked in the
// project's folder (they read ../spec) with ACCP's native library allowed to load.
lazy val commonSettings = Seq(
  scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-release", "21"),
  javacOptions ++= Seq("--release", "21"),
  Compile / doc / sources := Nil,
  Test / fork := true,
  Test / javaOptions += "--enable-native-access=ALL-UNNAMED",
  Test / baseDirectory := baseDirectory.value
)

lazy val core = (project in file("scala-core"))
  .settings(commonSettings)
  .settings(
    name := "simple-auth-core",
    libraryDependencies ++= Seq(
      "com.nimbusds"    % "nimbus-jose-jwt" % "10.10",
      "org.bouncycastle" % "bcprov-jdk18on"  % "1.86",
      // RSA, ES256 and EdDSA signing through AWS-LC (native), the same provider in all three JVM stacks: NativeCrypto.
      ("software.amazon.cryptools" % "AmazonCorrettoCryptoProvider" % "2.5.0").classifier(AccpClassifier),
      // UnusableHashLog's logger: each stack binds SLF4J to its own logging (akka: logback; zio: zio-logging's bridge).
      "org.slf4j"        % "slf4j-api"       % "2.0.17",
      ScalaTest,
      "io.spray"        %% "spray-json"      % "1.3.6"  % Test, // reads spec/vectors.json
      "ch.qos.logback"   % "logback-classic" % "1.5.18" % Test  // LogCapture
    )
  )

// The fat jars' merge rules, the same for both stacks.
lazy val assemblySettings = Seq(
  assembly / test := {},
  assembly / assemblyMergeStrategy := {
    case "reference.conf" | "application.conf" | "version.conf"      => MergeStrategy.concat
    case PathList("module-info.class")                                => MergeStrategy.discard
    case PathList("META-INF", "versions", _, "module-info.class")     => MergeStrategy.discard
    case x if x.endsWith("/module-info.class")                        => MergeStrategy.discard
    case PathList("META-INF", "io.netty.versions.properties")         => MergeStrategy.first
    case PathList("META-INF", "services", _*)                         => MergeStrategy.filterDistinctLines
    case PathList("META-INF", "INDEX.LIST")                           => MergeStrategy.discard
    case PathList("META-INF", xs @ _*) if xs.lastOption.contains("MANIFEST.MF") => MergeStrategy.discard
    case x if x.endsWith("OSGI-INF/MANIFEST.MF")                      => MergeStrategy.discard
    // bcprov is used through its lightweight API (Argon2BytesGenerator, ASN.1), not as a signed JCE provider, so
    // dropping its jar signature is harmless.
    case PathList("META-INF", xs @ _*) if xs.lastOption.exists(n => n.endsWith(".SF") || n.endsWith(".DSA") || n.endsWith(".RSA")) =>
      MergeStrategy.discard
    case x if x.endsWith(".proto")                                    => MergeStrategy.first
    case x =>
      val old = (assembly / assemblyMergeStrategy).value
      old(x)
  }
)

lazy val akka = (project in file("akka"))
  .dependsOn(core % "compile->compile;test->test")
  .settings(commonSettings, assemblySettings)
  .settings(
    name := "simple-auth-akka",
    libraryDependencies ++= Seq(
      "com.typesafe.akka" %% "akka-actor-typed"     % AkkaVersion,
      "com.typesafe.akka" %% "akka-stream"          % AkkaVersion,
      "com.typesafe.akka" %% "akka-slf4j"           % AkkaVersion,
      "com.typesafe.akka" %% "akka-http"            % AkkaHttpVersion,
      "com.typesafe.akka" %% "akka-http-spray-json" % AkkaHttpVersion,
      HikariCP,
      Postgres,
      // GET /metrics: Micrometer, the JVM's metrics facade (HikariCP and Spring use it), with its Prometheus registry.
      "io.micrometer"      % "micrometer-registry-prometheus" % "1.16.8",
      "ch.qos.logback"     % "logback-classic"      % "1.5.18",
      ScalaTest,
      "com.typesafe.akka" %% "akka-http-testkit"        % AkkaHttpVersion % Test,
      // akka-http-testkit's route tests need akka-testkit (a "provided" dependency of it); akka-stream-testkit,
      // its other one, is not used here (and Maven Central has no 2.8.5 of it).
      "com.typesafe.akka" %% "akka-testkit"             % AkkaVersion     % Test,
      "com.typesafe.akka" %% "akka-actor-testkit-typed" % AkkaVersion     % Test
    ),
    run / fork := true,
    Compile / mainClass := Some("simpleauth.App"),
    assembly / mainClass := Some("simpleauth.App"),
    assembly / assemblyJarName := "simple-auth-akka.jar",
    assembly / assemblyOutputPath := baseDirectory.value / "target" / (assembly / assemblyJarName).value
  )

// The benchmark-only entry point (stack.json "signbench"), kept out of the service's jar: akka/target/
// simple-auth-akka-signbench.jar (SignBench alone), run with the service's jar on the class path.
lazy val akkaSignbench = (project in file("akka/signbench"))
  .dependsOn(akka % "compile->compile;test->test")
  .settings(commonSettings)
  .settings(
    name := "simple-auth-akka-signbench",
    libraryDependencies += ScalaTest,
    Compile / packageBin / artifactPath := (akka / baseDirectory).value / "target" / "simple-auth-akka-signbench.jar",
    Test / baseDirectory := (akka / baseDirectory).value // the tests read ../spec
  )

lazy val zio = (project in file("zio"))
  .dependsOn(core)
  .settings(commonSettings, assemblySettings)
  .settings(
    name := "simple-auth-zio",
    testFrameworks += new TestFramework("zio.test.sbt.ZTestFramework"),
    libraryDependencies ++= Seq(
      "dev.zio"  %% "zio"                       % ZioVersion,
      // netty-pkitesting (+ an older BouncyCastle) is only for self-signed TLS test certificates; we serve plain HTTP.
      ("dev.zio" %% "zio-http"                  % ZioHttpVersion).exclude("io.netty", "netty-pkitesting"),
      "dev.zio"  %% "zio-json"                  % "0.9.2",
      // Our log lines, and (through the SLF4J bridge) HikariCP's, pgjdbc's, Netty's and the core's, in one logger.
      "dev.zio"  %% "zio-logging"               % ZioLoggingVersion,
      "dev.zio"  %% "zio-logging-slf4j2-bridge" % ZioLoggingVersion,
      HikariCP,
      Postgres,
      "dev.zio"  %% "zio-test"                  % ZioVersion % Test,
      "dev.zio"  %% "zio-test-sbt"              % ZioVersion % Test
    ),
    assembly / mainClass := Some("simpleauth.Main"),
    assembly / assemblyJarName := "simple-auth-zio.jar",
    assembly / assemblyOutputPath := baseDirectory.value / "target" / (assembly / assemblyJarName).value
  )

// The benchmark's `signbench` entry point, kept out of the service's jar: zio/target/simple-auth-zio-signbench.jar,
// run with the service's fat jar on the class path (stack.json "signbench").
lazy val zioSignbench = (project in file("zio/signbench"))
  .dependsOn(zio % "compile->compile;test->test")
  .settings(commonSettings)
  .settings(
    name := "simple-auth-zio-signbench",
    testFrameworks += new TestFramework("zio.test.sbt.ZTestFramework"),
    Compile / packageBin / artifactPath := (zio / baseDirectory).value / "target" / "simple-auth-zio-signbench.jar",
    Test / baseDirectory := (zio / baseDirectory).value
  )
