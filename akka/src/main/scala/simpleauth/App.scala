package simpleauth

import akka.Done
import akka.actor.{ClassicActorSystemProvider, CoordinatedShutdown}
import akka.actor.typed.{ActorSystem, DispatcherSelector}
import akka.actor.typed.scaladsl.Behaviors
import akka.http.scaladsl.Http
import akka.http.impl.settings.AnyMethodParserSettings
import akka.http.scaladsl.settings.ServerSettings
import com.typesafe.config.{Config, ConfigFactory}
import org.slf4j.LoggerFactory
import scala.concurrent.{ExecutionContext, Future}
import scala.concurrent.duration.*
import scala.util.{Failure, Success}

object App {
  private val Name = "simple-auth-akka"

  /** Shutdown asked for by SIGTERM/SIGINT: a normal stop, exit code 0. */
  private case object SignalReceived extends CoordinatedShutdown.Reason

  def main(args: Array[String]): Unit = {
    val nativeCryptoUnavailable = NativeCrypto.install() // before the key is parsed
    // Validate everything before any thread, pool or actor exists, so a refused
    // start is one line on stderr and a non-zero exit.
    val settings = Settings.fromEnv().fold(refuseToStart, identity)
    System.setProperty("LOG_LEVEL", settings.logLevel)

    given system: ActorSystem[Nothing] = ActorSystem(Behaviors.empty[Nothing], "simple-auth", actorSystemConfig(settings))
    given ExecutionContext = system.executionContext
    val log = LoggerFactory.getLogger("simpleauth")
    nativeCryptoUnavailable.foreach(why =>
      log.warn(s"native crypto provider (ACCP) unavailable, signing with the JDK's RSA (${NativeCrypto.rsaProvider}): $why"))

    val dbEc = system.dispatchers.lookup(DispatcherSelector.fromConfig("simple-auth.db-dispatcher"))
    val hashingEc = system.dispatchers.lookup(DispatcherSelector.fromConfig("simple-auth.hashing-dispatcher"))

    val connections = new ConnectionSource(settings)
    val shutdown = CoordinatedShutdown(system)
    // After the HTTP binding has drained (service-unbind .. service-stop), close the pool.
    shutdown.addTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate, "close-db-pool") { () =>
      Future { connections.close(); Done }(using dbEc)
    }

    val metrics = Metrics()
    val signer = new TokenSigner(settings.key, settings.issuer, settings.audience, settings.tokenTtlSeconds, metrics)
    val users = new JdbcUserRepository(connections, settings.dbAcquireTimeoutMs)(using dbEc)
    metrics.bindPool(users.poolStatistics)
    val tokens = new TokenService(users, new PasswordVerifier(metrics), signer, new UnusableHashLog(), hashingEc)
    val routes = new TokenRoutes(tokens, new DatabaseHealth(users), signer.jwks(), metrics).routes

    installSignalHandlers(shutdown)

    Http().newServerAt(settings.host, settings.port).withSettings(serverSettings(system)).bind(routes).onComplete {
      case Success(binding) =>
        binding.addToCoordinatedShutdown(hardTerminationDeadline = 10.seconds)
        val version = Option(getClass.getPackage.getImplementationVersion).getOrElse("dev")
        val address = binding.localAddress // the real port when PORT=0
        log.info(s"$Name $version listening on http://${settings.host}:${address.getPort} " +
          s"(db pool ${settings.dbPoolSize}, kid ${signer.kid}, issuer ${settings.issuer}, rsa ${NativeCrypto.rsaProvider})")
      case Failure(e) =>
        System.err.println(s"$Name: cannot listen on ${settings.host}:${settings.port}: ${e.getMessage}")
        shutdown.run(CoordinatedShutdown.UnknownReason).onComplete(_ => System.exit(1))
    }
  }

  /**
   * akka-http's server settings, with a request parser that accepts every method token
   * ([[akka.http.impl.settings.AnyMethodParserSettings]]): `FOO /health` and `QUERY /token` reach the routes
   * and get the contract's 405 or 404 instead of the parser's 501.
   */
  private[simpleauth] def serverSettings(system: ClassicActorSystemProvider): ServerSettings = {
    val base = ServerSettings(system)
    base.withParserSettings(AnyMethodParserSettings(base.parserSettings))
  }

  /** Invalid settings: one line on stderr, exit 2 (shared with SignBench, which loads the same settings). */
  private[simpleauth] def refuseToStart(e: SettingsError): Nothing = {
    System.err.println(s"$Name: refusing to start: ${e.message}")
    sys.exit(2)
  }

  private def actorSystemConfig(settings: Settings): Config = {
    val hashingThreads = math.max(1, Runtime.getRuntime.availableProcessors())
    ConfigFactory.parseString(
      s"""
         |simple-auth.db-dispatcher.thread-pool-executor.fixed-pool-size = ${settings.dbPoolSize}
         |simple-auth.hashing-dispatcher.thread-pool-executor.fixed-pool-size = $hashingThreads
         |akka.coordinated-shutdown.exit-jvm = on
         |akka.coordinated-shutdown.exit-code = 0
         |""".stripMargin
    ).withFallback(ConfigFactory.load())
  }

  /**
   * The JVM's own SIGTERM handling runs the shutdown hooks and then exits with 143;
   * the contract wants exit 0 after a clean drain, so handle the signals ourselves
   * and let CoordinatedShutdown (exit-jvm = on, exit-code = 0) end the process.
   */
  private def installSignalHandlers(shutdown: CoordinatedShutdown): Unit =
    for (name <- List("TERM", "INT"))
      try sun.misc.Signal.handle(new sun.misc.Signal(name), _ => { shutdown.run(SignalReceived); () })
      catch { case _: IllegalArgumentException => () } // signal not available on this platform
}
