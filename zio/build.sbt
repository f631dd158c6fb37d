ThisBuild / scalaVersion := "3.3.7"
ThisBuild / version      := "1.0.0"
ThisBuild / organization := "example.simpleauth"

val zioVersion     = "2.1.26"

// ACCP ships its native library (AWS-LC) per platform, as linux-x86_64 and linux-aarch_64 (sic) jars on Maven
// Central. The classifier follows the machine that builds (os.arch), so an arm64 build — a Docker build on arm
// included — signs natively too; on any other architecture the x86-64 jar is taken and the service, finding no
// loadable library, signs with the JDK and says so at start (one WARN line). The same rule in all three JVM stacks.
val accpClassifier = sys.props.getOrElse("os.arch", "") match {
  case "aarch64" | "arm64" => "linux-aarch_64"
  case _                   => "linux-x86_64"
}
val zioHttpVersion = "3.11.3"

val zioLoggingVersion = "2.5.3"

// Shared by the service and the signbench jar.
lazy val commonSettings = Seq(
  // scaladoc_3 for 3.3.7 is not on Maven Central; we never build API docs, so drop the doc tool.
  Compile / doc / sources := Nil,
  testFrameworks += new TestFramework("zio.test.sbt.ZTestFramework"),
  scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-release", "21"),
  javacOptions ++= Seq("--release", "21"),
  Test / fork := true,
  Test / javaOptions += "--enable-native-access=ALL-UNNAMED", // ACCP loads its native library
  Test / baseDirectory := (ThisBuild / baseDirectory).value       // tests read ../spec from the stack folder
)

lazy val root = (project in file("."))
  .settings(commonSettings)
  .settings(
    name := "simple-auth-zio",
    libraryDependencies ++= Seq(
      "dev.zio"              %% "zio"             % zioVersion,
      // netty-pkitesting (+ an older BouncyCastle) is only for self-signed TLS test certificates; we serve plain HTTP.
      ("dev.zio"             %% "zio-http"        % zioHttpVersion).exclude("io.netty", "netty-pkitesting"),
      "dev.zio"              %% "zio-json"        % "0.9.2",
      // Our log lines, and (through the SLF4J bridge) HikariCP's, pgjdbc's and Netty's, in one logger.
      "dev.zio"              %% "zio-logging"               % zioLoggingVersion,
      "dev.zio"              %% "zio-logging-slf4j2-bridge" % zioLoggingVersion,
      "com.zaxxer"            % "HikariCP"        % "7.1.0",
      "org.postgresql"        % "postgresql"      % "42.7.14",
      "com.nimbusds"          % "nimbus-jose-jwt" % "10.10",
      "org.bouncycastle"      % "bcprov-jdk18on"  % "1.86",
      // RSA signing through AWS-LC (native), the same provider in all three JVM stacks: see NativeCrypto.
      ("software.amazon.cryptools" % "AmazonCorrettoCryptoProvider" % "2.5.0").classifier(accpClassifier),
      "dev.zio"              %% "zio-test"        % zioVersion % Test,
      "dev.zio"              %% "zio-test-sbt"    % zioVersion % Test
    )
  )

// The benchmark's `signbench` entry point, kept out of the service's jar: a thin jar of its own
// (target/simple-auth-zio-signbench.jar), run with the service's fat jar on the class path (stack.json "signbench").
lazy val signbench = (project in file("signbench"))
  .dependsOn(root % "compile->compile;test->test")
  .settings(commonSettings)
  .settings(
    name := "simple-auth-zio-signbench",
    Compile / packageBin / artifactPath := (ThisBuild / baseDirectory).value / "target" / "simple-auth-zio-signbench.jar"
  )

// The service: one fat jar with a fixed name, run by stack.json as `java -jar target/simple-auth-zio.jar`. (Settings
// written bare in this file apply to the root project only.)
assembly / assemblyJarName       := "simple-auth-zio.jar"
assembly / assemblyOutputPath    := baseDirectory.value / "target" / (assembly / assemblyJarName).value
assembly / mainClass             := Some("simpleauth.Main")
assembly / test                  := {}
assembly / assemblyMergeStrategy := {
  case PathList("module-info.class")                           => MergeStrategy.discard
  case PathList("META-INF", "versions", _, "module-info.class") => MergeStrategy.discard
  case PathList("META-INF", "io.netty.versions.properties")   => MergeStrategy.first
  case PathList("META-INF", "services", _*)                   => MergeStrategy.filterDistinctLines
  case PathList("META-INF", "MANIFEST.MF")                    => MergeStrategy.discard
  case x if x.endsWith("OSGI-INF/MANIFEST.MF")                => MergeStrategy.discard
  case PathList("META-INF", xs @ _*) if xs.lastOption.exists(n => n.endsWith(".SF") || n.endsWith(".DSA") || n.endsWith(".RSA")) =>
    MergeStrategy.discard
  case "reference.conf"                                       => MergeStrategy.concat
  case x if x.endsWith("/module-info.class")                  => MergeStrategy.discard
  case x =>
    val old = (assembly / assemblyMergeStrategy).value
    old(x)
}
