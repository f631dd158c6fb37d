package simpleauth

import zio.*
import zio.logging.{consoleLogger, ConsoleLoggerConfig, LogFilter, LogFormat, loggerNameAnnotationKey}
import zio.logging.slf4j.bridge.Slf4jBridge

/**
 * The service's logging, zio-logging's console logger: one line per event on stdout — time, level, message, and a
 * cause as its type and message and its root cause's (stack traces only at `LOG_LEVEL=debug`). HikariCP, pgjdbc and
 * Netty log through SLF4J into the same logger, warnings and errors only.
 */
object Logging:
  /** LOG_LEVEL, read before the settings: the logger is in place before anything logs (a bad value is `Settings`'). */
  def level(value: Option[String]): LogLevel =
    value.flatMap(parseLogLevel).getOrElse(LogLevel.Info)

  /** A LOG_LEVEL value, case and surrounding blanks aside; None for an unknown one. */
  def parseLogLevel(value: String): Option[LogLevel] =
    value.trim.toLowerCase match
      case "error"            => Some(LogLevel.Error)
      case "warn" | "warning" => Some(LogLevel.Warning)
      case "info"             => Some(LogLevel.Info)
      case "debug" | "trace"  => Some(LogLevel.Debug)
      case _                  => None

  /** A library's SLF4J logger name, shortened to its class: `HikariPool: ...`. */
  private val library: LogFormat = LogFormat.make { (out, _, _, _, _, _, _, _, annotations) =>
    annotations.get(loggerNameAnnotationKey).foreach(name => out.appendText(name.substring(name.lastIndexOf('.') + 1) + ": "))
  }

  /** The cause on the same line; its stack trace on the lines after only if `stackTraces`. */
  private def cause(stackTraces: Boolean): LogFormat = LogFormat.make { (out, _, _, _, _, cause, _, _, _) =>
    if !cause.isEmpty then
      val t = cause.squashTraceWith {
        case t: Throwable => t
        case other        => new RuntimeException(String.valueOf(other))
      }
      val sb = new java.lang.StringBuilder(" (cause: ").append(t.getClass.getName).append(": ").append(t.getMessage)
      var root = t
      while root.getCause != null && (root.getCause ne root) do root = root.getCause
      if root ne t then sb.append("; root cause: ").append(root.getClass.getName).append(": ").append(root.getMessage)
      sb.append(')')
      if stackTraces then
        val trace = new java.io.StringWriter()
        t.printStackTrace(new java.io.PrintWriter(trace))
        sb.append('\n').append(trace)
      out.appendText(sb.toString)
  }

  def format(min: LogLevel): LogFormat =
    LogFormat.timestamp + LogFormat.text(" ") + LogFormat.level + LogFormat.text(" simple-auth-zio: ") +
      library + LogFormat.line + cause(stackTraces = min <= LogLevel.Debug)

  /**
   * Replaces ZIO's default logger. The SLF4J bridge starts without ZIO's current-fiber tracking
   * (`Runtime.enableCurrentFiber`), which would cost every fiber a thread-local update for log context the
   * libraries' few lines do not need.
   */
  def layer(min: LogLevel): ZLayer[Any, Nothing, Unit] =
    val libraries = if min > LogLevel.Warning then min else LogLevel.Warning
    Runtime.removeDefaultLoggers >>>
      consoleLogger(ConsoleLoggerConfig(format(min), LogFilter.LogLevelByNameConfig(min))) >+>
      Slf4jBridge.initWithoutFiberRefPropagation(LogFilter.logLevel(libraries))
