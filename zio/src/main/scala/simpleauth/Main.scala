package simpleauth

import zio.*
import zio.http.*
import zio.http.netty.NettyConfig

object Main extends ZIOAppDefault:
  val StackName = "zio"
  val Version   = Option(getClass.getPackage.getImplementationVersion).getOrElse("dev")

  /** A refused start (settings, port): the one line on stderr, then this exit code, as in every stack. */
  val RefusedExitCode = ExitCode(2)

  /** The line a refused start prints on stderr (the service and `SignBench` alike). */
  def refusal(e: SettingsError): String = s"simple-auth-zio: ${e.message}"

  /**
   * The settings of the environment (contract §5), by the core's rules; a refused one is the start's one error. The
   * key files are read here, so on the blocking pool.
   */
  val loadSettings: IO[SettingsError, Settings] = System.envs.orDie.flatMap(settingsFrom)

  /** The settings of the environment `env`. */
  def settingsFrom(env: Map[String, String]): IO[SettingsError, Settings] =
    ZIO.attemptBlocking(Settings.fromEnv(env)).orDie.flatMap(ZIO.fromEither(_))

  override val bootstrap: ZLayer[ZIOAppArgs, Any, Any] = Logging.layer(Logging.level(sys.env.get("LOG_LEVEL")))

  /**
   * SIGTERM/SIGINT complete `stop`; we then stop the server, drain, close the pool and exit 0. SIGHUP (which the JVM
   * would otherwise treat as a shutdown) is put into `hangups`, from which `program` reloads the keys: the signal
   * thread only hands it over, the reload runs in this runtime (its logger, its blocking pool).
   */
  private def onSignals(stop: Promise[Nothing, Unit], hangups: Queue[Unit]): UIO[Unit] =
    def bridge(effect: UIO[Any]): sun.misc.SignalHandler = _ => Unsafe.unsafe(implicit u => Runtime.default.unsafe.run(effect).getOrThrow())
    ZIO.succeed {
      sun.misc.Signal.handle(new sun.misc.Signal("TERM"), bridge(stop.succeed(())))
      sun.misc.Signal.handle(new sun.misc.Signal("INT"), bridge(stop.succeed(())))
    } *>
      ZIO
        .attempt(sun.misc.Signal.handle(new sun.misc.Signal("HUP"), bridge(hangups.offer(()))))
        .flatMap(previous =>
          // Started with SIGHUP ignored (nohup): the JVM keeps it so, returns SIG_IGN and installs nothing.
          ZIO.logWarning("SIGHUP is ignored in this process (started by nohup?), so no key reload on SIGHUP")
            .when(previous == sun.misc.SignalHandler.SIG_IGN)
        )
        .catchAll(e => ZIO.logWarning(s"SIGHUP cannot be handled here, so no key reload on SIGHUP: ${e.getMessage}"))
        .unit

  def serverConfig(cfg: Settings): Server.Config =
    Server.Config.default
      .binding(cfg.host, cfg.port)
      // Bodies are streamed, not aggregated by Netty, so we can answer 413 ourselves (JSON) for both
      // Content-Length and chunked bodies; RequestBody.read stops at 8192 bytes.
      .enableRequestStreaming
      // A client that sends `Expect: 100-continue` gets its 100 at once (spec/README.md, Rules).
      .acceptContinue(true)
      .gracefulShutdownTimeout(10.seconds)
      .idleTimeout(60.seconds)
      .logWarningOnFatalError(false)
      // A request's handler starts on the event loop that read it, not forked to ZIO's default executor: what comes
      // before its first asynchronous step is routing and header checks, and a POST then shifts to a JDBC thread
      // (Api.onJdbcThread). No handler blocks before such a step: JDBC and argon2id run on executors of their own.
      .avoidContextSwitching(true)

  /** Netty defaults, except a short event-loop quiet period at shutdown: in-flight requests are drained before. */
  val nettyConfig: NettyConfig = NettyConfig.defaultWithFastShutdown

  /** The services, built once; the pool is opened before and closed after the server (this is the outer layer). */
  def services(cfg: Settings): ZLayer[Any, SettingsError, Api.Env] =
    ZLayer.make[Api.Env](
      ZLayer.succeed(cfg),
      Database.live,
      JdbcExecutor.live,
      UserRepository.live,
      SessionRepository.live,
      DatabaseHealth.live,
      AddressLimiterLayer.live,
      PasswordVerifier.live,
      ZLayer.succeed(new UnusableHashLog()),
      KeyRing.live,
      TokenService.live
    )

  /**
   * The METRICS_PORT listener (§3): a second zio-http server of its own, with the public one's settings but its port,
   * open while `scope` is. Failing to bind it stops the start as failing to bind PORT does.
   */
  private[simpleauth] def metricsServer(cfg: Settings): ZIO[Scope, SettingsError, Server] =
    ((ZLayer.succeed(serverConfig(cfg).binding(cfg.host, cfg.metricsPort)) ++ ZLayer.succeed(nettyConfig)) >>> Server.customized)
      .build
      .map(_.get[Server])
      .mapError(e => SettingsError(s"cannot listen on ${cfg.host}:${cfg.metricsPort}: ${e.getMessage}"))

  private def program(cfg: Settings, stop: Promise[Nothing, Unit], hangups: Queue[Unit]): ZIO[Api.Env & Server, SettingsError, Unit] =
    val draining = Draining()
    val api      = Api(draining, cfg.limits.trustedProxies)
    def cannotListen(port: Int)(t: Throwable) = ZIO.fail(SettingsError(s"cannot listen on ${cfg.host}:$port: ${t.getMessage}"))
    ZIO.scoped[Api.Env & Server] { for
      port  <- api.install.catchAllDefect(cannotListen(cfg.port))
      mport <- metricsServer(cfg).flatMap(api.installMetrics(_).catchAllDefect(cannotListen(cfg.metricsPort)))
      keys <- ZIO.serviceWithZIO[KeyRing](_.keys)
      _ <- ZIO.logInfo(
        s"simple-auth stack=$StackName version=$Version listening on ${cfg.host}:$port metrics port $mport " +
          s"db=${cfg.database.jdbcUrl.takeWhile(_ != '?')} pool=${cfg.dbPoolSize} kid=${keys.signing.kid} " +
          s"alg=${keys.signing.algorithm.name} published=${keys.published.size} issuer=${cfg.issuer} signer=${keys.signer.provider}"
      )
      _ <- hangups.take.zipRight(KeyRing.reload).forever.fork // one reload per SIGHUP, in order, until shutdown
      _ <- stop.await
      _ <- ZIO.logInfo("shutting down: draining in-flight requests")
      _ <- draining.start
    yield () }

  override def run: ZIO[ZIOAppArgs & Scope, Any, Any] =
    val app =
      for
        stop    <- Promise.make[Nothing, Unit]
        hangups <- Queue.unbounded[Unit]
        _       <- onSignals(stop, hangups)
        cfg  <- loadSettings
        noNativeCrypto <- ZIO.succeed(NativeCrypto.install()) // done by the key loader already: its outcome, for the log
        _    <- ZIO.foreachDiscard(noNativeCrypto)(why => ZIO.logWarning(s"native crypto provider unavailable, signing with the JDK's providers: $why"))
        server = (ZLayer.succeed(serverConfig(cfg)) ++ ZLayer.succeed(nettyConfig)) >>>
                   Server.customized.mapError(e => SettingsError(s"cannot listen on ${cfg.host}:${cfg.port}: ${e.getMessage}"))
        _    <- program(cfg, stop, hangups).provideSomeLayer[Api.Env](server).provideLayer(services(cfg))
      yield ()
    app.catchAll { (e: SettingsError) =>
      Console.printLineError(refusal(e)).ignore *> exit(RefusedExitCode)
    }
