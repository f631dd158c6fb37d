package simpleauth

import ch.qos.logback.classic.{Level, Logger}
import ch.qos.logback.classic.spi.ILoggingEvent
import ch.qos.logback.core.read.ListAppender
import org.slf4j.LoggerFactory
import scala.jdk.CollectionConverters.*

/** A logger of its own at DEBUG whose events the test reads back. */
final class LogCapture(name: String) {
  private val appender = new ListAppender[ILoggingEvent]()
  appender.start()
  val logger: Logger = LoggerFactory.getLogger(s"test.$name").asInstanceOf[Logger]
  logger.setLevel(Level.DEBUG)
  logger.setAdditive(false)
  logger.addAppender(appender)

  /** (level, message) of every event so far. */
  def events: List[(Level, String)] = appender.list.asScala.toList.map(e => (e.getLevel, e.getFormattedMessage))
}
