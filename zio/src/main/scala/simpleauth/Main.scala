package simpleauth

import java.time.Instant

import zio.*
import zio.http.*
import zio.http.netty.NettyConfig

object Main extends ZIOAppDefault:
  val StackName = "zio"
  val Version   = Option(getClass.getPackage.getImplementationVersion).getOrElse("dev")

  /** LOG_LEVEL is needed before the typed config is read, so the logger reads it directly. */
  private def minLevel: LogLevel =
    sys.env.get("LOG_LEVEL").map(_.trim.toLowerCase) match
      case Some("error")               => LogLevel.Error
      case Some("warn" | "warning")    => LogLevel.Warning
      case Some("debug" | "trace")     => LogLevel.Debug
      case _                           => LogLevel.Info

  /** One line per event on stdout: time, level, message, and the cause's type and message (no stack trace unless debug). */
  private def lineLogger(min: LogLevel): ZLogger[String, Unit] =
    new ZLogger[String, Unit]:
      def apply(
          trace: Trace,
          fiberId: FiberId,
          logLevel: LogLevel,
          message: () => String,
          cause: Cause[Any],
          context: FiberRefs,
          spans: List[LogSpan],
          annotations: Map[String, String]
      ): Unit =
        if logLevel >= min then
          val sb = new java.lang.StringBuilder(128)
          sb.append(Instant.now()).append(' ').append(logLevel.label).append(" simple-auth-zio: ").append(message())
          if !cause.isEmpty then
            cause.squashTraceWith {
              case t: Throwable => t
              case other        => new RuntimeException(String.valueOf(other))
            } match
              case t =>
                sb.append(" (cause: ").append(t.getClass.getName).append(": ").append(t.getMessage)
                var root = t
                while root.getCause != null && (root.getCause ne root) do root = root.getCause
                if root ne t then sb.append("; root cause: ").append(root.getClass.getName).append(": ").append(root.getMessage)
                sb.append(')')
                if min <= LogLevel.Debug then
                  val sw = new java.io.StringWriter()
                  t.printStackTrace(new java.io.PrintWriter(sw))
                  sb.append('\n').append(sw)
          java.lang.System.out.println(sb.toString)

  override val bootstrap: ZLayer[ZIOAppArgs, Any, Any] =
    Runtime.removeDefaultLoggers >>> Runtime.addLogger(lineLogger(minLevel))

  /** SIGTERM/SIGINT complete this promise; we then stop the server, drain, close the pool and exit 0. */
  private def onSignals(stop: Promise[Nothing, Unit]): UIO[Unit] =
    ZIO.succeed {
      val handler: sun.misc.SignalHandler = _ => Unsafe.unsafe(implicit u => Runtime.default.unsafe.run(stop.succeed(())).getOrThrow())
      sun.misc.Signal.handle(new sun.misc.Signal("TERM"), handler)
      sun.misc.Signal.handle(new sun.misc.Signal("INT"), handler)
      ()
    }

  def serverConfig(cfg: AppConfig): Server.Config =
    Server.Config.default
      .binding(cfg.host, cfg.port)
      // Bodies are streamed, not aggregated by Netty, so we can answer 413 ourselves (JSON) for both
      // Content-Length and chunked bodies; Api.readBody stops at 8192 bytes.
      .enableRequestStreaming
      // acceptContinue stays off: with Netty's HttpServerExpectContinueHandler in the pipeline, one of the
      // suite's generated requests (schemathesis, a PUT with a body) never got an answer.
      .gracefulShutdownTimeout(10.seconds)
      .idleTimeout(60.seconds)
      .logWarningOnFatalError(false)

  /** Netty defaults, except a short event-loop quiet period at shutdown: in-flight requests are drained before. */
  val nettyConfig: NettyConfig = NettyConfig.defaultWithFastShutdown

  private def program(cfg: AppConfig, stop: Promise[Nothing, Unit]): ZIO[Api.Env & Server, AppConfig.StartupError, Unit] =
    for
      port <- Api.install.catchAllDefect(t =>
                ZIO.fail(AppConfig.StartupError(s"cannot listen on ${cfg.host}:${cfg.port}: ${t.getMessage}"))
              )
      kid  <- ZIO.serviceWith[TokenSigner](_.kid)
      _ <- ZIO.logInfo(
        s"simple-auth stack=$StackName version=$Version listening on ${cfg.host}:$port " +
          s"db=${cfg.database.display} pool=${cfg.poolSize} kid=$kid issuer=${cfg.issuer} rsa=${NativeCrypto.rsaProvider}"
      )
      _ <- stop.await
      _ <- ZIO.logInfo("shutting down: draining in-flight requests")
      _ <- Api.startDraining
    yield ()

  override def run: ZIO[ZIOAppArgs & Scope, Any, Any] =
    val app =
      for
        stop <- Promise.make[Nothing, Unit]
        _    <- onSignals(stop)
        noNativeCrypto <- NativeCrypto.install // before the key is parsed
        _    <- ZIO.foreachDiscard(noNativeCrypto)(why => ZIO.logWarning(s"native crypto provider unavailable, signing with the JDK's RSA: $why"))
        cfg  <- AppConfig.load
        services = ZLayer.succeed(cfg) >>> (UserRepository.live ++ PasswordVerifier.live ++ TokenSigner.live)
        // The services layer is the outer one: its pool is opened before and closed after the server.
        _ <- program(cfg, stop)
               .provideSomeLayer[Api.Env]((ZLayer.succeed(serverConfig(cfg)) ++ ZLayer.succeed(nettyConfig)) >>> Server.customized.mapError(e => AppConfig.StartupError(s"cannot listen on ${cfg.host}:${cfg.port}: ${e.getMessage}")))
               .provideLayer(services)
      yield ()
    app.catchAll { (e: AppConfig.StartupError) =>
      Console.printLineError(e.line).ignore *> exit(ExitCode.failure)
    }
