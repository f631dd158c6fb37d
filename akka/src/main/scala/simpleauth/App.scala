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
import scala.util.control.NonFatal

object App {
  private val Name = "simple-auth-akka"

  /** Shutdown asked for by SIGTERM/SIGINT: a normal stop, exit code 0. */
  private case object SignalReceived extends CoordinatedShutdown.Reason

  def main(args: Array[String]): Unit = {
    // Validate everything before any thread, pool or actor exists, so a refused
    // start is one line on stderr and a non-zero exit.
    val settings = Settings.fromEnv().fold(refuseToStart, identity)
    val nativeCryptoUnavailable = NativeCrypto.install() // done by the key loader already: its outcome, for the log
    System.setProperty("LOG_LEVEL", settings.logLevel)
    val metrics = Metrics()
    val tokenSettings = KeySet.TokenSettings.from(settings)
    val keys = new KeyRing(
      KeySet.build(settings.keys, tokenSettings, metrics).fold(refuseToStart, identity),
      () => settings.keySources.load().flatMap(KeySet.build(_, tokenSettings, metrics)),
      metrics
    )

    given system: ActorSystem[Nothing] = ActorSystem(Behaviors.empty[Nothing], "simple-auth", actorSystemConfig(settings))
    given ExecutionContext = system.executionContext
    val log = LoggerFactory.getLogger("simpleauth")
    nativeCryptoUnavailable.foreach(why =>
      log.warn(s"native crypto provider (ACCP) unavailable, signing with the JDK's (${keys.current.signer.provider}): $why"))

    val dbEc = system.dispatchers.lookup(DispatcherSelector.fromConfig("simple-auth.db-dispatcher"))
    val passwordEc = system.dispatchers.lookup(DispatcherSelector.fromConfig("simple-auth.password-dispatcher"))

    val connections = new ConnectionSource(settings)
    val shutdown = CoordinatedShutdown(system)
    // After the HTTP binding has drained (service-unbind .. service-stop), close the pool.
    shutdown.addTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate, "close-db-pool") { () =>
      Future { connections.close(); Done }(using dbEc)
    }

    val db = new JdbcDatabase(connections, settings.dbAcquireTimeoutMs)(using dbEc)
    metrics.bindPool(db.poolStatistics)
    val limits = settings.limits
    val users = new JdbcUserRepository(db, limits.loginMaxFailures, limits.loginFailureWindowSeconds)
    val sessions = new JdbcSessionRepository(db, limits.refreshTtlSeconds, limits.refreshMaxLifetimeSeconds)
    val tokens = new TokenService(
      users,
      sessions,
      new PasswordVerifier(metrics),
      keys,
      new UnusableHashLog(),
      passwordEc,
      metrics,
      new AddressLimiter(limits.loginIpMaxFailures, limits.loginFailureWindowSeconds),
      new PasswordCheckLimit(limits.maxPasswordChecks),
      settings.defaultClientId
    )
    val routes = new TokenRoutes(tokens, new DatabaseHealth(users), keys, metrics, limits.trustedProxies)

    installSignalHandlers(shutdown, keys)

    // Two listeners (§3): the public port, and METRICS_PORT serving only GET /metrics. Either failing to bind stops the
    // start; both are unbound and drained by the coordinated shutdown.
    def bind(port: Int, route: akka.http.scaladsl.server.Route) =
      Http().newServerAt(settings.host, port).withSettings(serverSettings(system)).bind(route)
        .transform(identity, e => new CannotListen(port, e))
    val public = bind(settings.port, routes.routes)
    val scrape = bind(settings.metricsPort, routes.metricsRoutes)
    public.zip(scrape).onComplete {
      case Success((binding, metricsBinding)) =>
        binding.addToCoordinatedShutdown(hardTerminationDeadline = 10.seconds)
        metricsBinding.addToCoordinatedShutdown(hardTerminationDeadline = 10.seconds)
        val version = Option(getClass.getPackage.getImplementationVersion).getOrElse("dev")
        val address = binding.localAddress // the real port when PORT=0
        val keySet = keys.current
        log.info(s"$Name $version listening on http://${settings.host}:${address.getPort} " +
          s"(metrics port ${metricsBinding.localAddress.getPort}, db pool ${settings.dbPoolSize}, kid ${keySet.kid}, " +
          s"alg=${keySet.algorithm.name}, issuer ${settings.issuer}, provider ${keySet.signer.provider})")
      case Failure(e) =>
        val (port, cause) = e match {
          case CannotListen(p, c) => (p, c)
          case other              => (settings.port, other)
        }
        System.err.println(s"$Name: cannot listen on ${settings.host}:$port: ${cause.getMessage}")
        // The other listener, if bound, is unbound by the shutdown (its binding is not registered: unbind it here).
        List(public, scrape).foreach(_.foreach(_.unbind()))
        shutdown.run(CoordinatedShutdown.UnknownReason).onComplete(_ => System.exit(1))
    }
  }

  /** A listener that could not be bound, and on which port. */
  private final case class CannotListen(port: Int, cause: Throwable) extends RuntimeException(cause)

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
    ConfigFactory.parseString(
      s"""
         |simple-auth.db-dispatcher.thread-pool-executor.fixed-pool-size = ${settings.dbPoolSize}
         |simple-auth.password-dispatcher.thread-pool-executor.fixed-pool-size = ${Argon2Memory.checksAtOnce}
         |akka.coordinated-shutdown.exit-jvm = on
         |akka.coordinated-shutdown.exit-code = 0
         |""".stripMargin
    ).withFallback(ConfigFactory.load())
  }

  /**
   * The JVM's own SIGTERM handling runs the shutdown hooks and then exits with 143;
   * the contract wants exit 0 after a clean drain, so handle the signals ourselves
   * and let CoordinatedShutdown (exit-jvm = on, exit-code = 0) end the process.
   *
   * SIGHUP, which the JVM would also treat as a request to shut down, reloads the keys instead
   * ([[KeyRing.reload]]). The JVM runs a signal handler on a thread of its own, started for that signal,
   * so reading the key files there blocks none of akka's dispatchers; the reload never throws.
   */
  private def installSignalHandlers(shutdown: CoordinatedShutdown, keys: KeyRing): Unit = {
    // Whether the handler is in place: not when the signal is unknown here, nor when the process was started with it
    // ignored (nohup ignores SIGHUP), which the JVM keeps: handle then returns SIG_IGN and installs nothing.
    def handle(name: String)(action: => Unit): Boolean =
      try sun.misc.Signal.handle(new sun.misc.Signal(name), _ => action) != sun.misc.SignalHandler.SIG_IGN
      catch { case _: IllegalArgumentException => false } // signal not available on this platform
    val log = LoggerFactory.getLogger("simpleauth")
    for (name <- List("TERM", "INT")) handle(name) { shutdown.run(SignalReceived); () }
    val reloads = handle("HUP") {
      try { keys.reload(); () }
      catch { case NonFatal(e) => log.error(s"key reload failed: $e") }
    }
    if (!reloads)
      log.warn("SIGHUP is ignored in this process (started by nohup?) or not available, so the keys cannot be reloaded")
  }
}
