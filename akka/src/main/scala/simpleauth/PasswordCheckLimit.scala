package simpleauth

import java.util.concurrent.Semaphore
import java.util.concurrent.atomic.AtomicBoolean
import scala.concurrent.{ExecutionContext, Future}
import scala.util.control.NonFatal

/**
 * The overload limit (contract §8): at most `permits` argon2id checks admitted at once, running or waiting for
 * a core. A permit is taken without waiting when a check is submitted and given back when the check has run
 * (or failed, or could not be submitted); with none free the check is not submitted at all.
 */
final class PasswordCheckLimit(permits: Int) {
  private val semaphore = new Semaphore(permits)

  /** Permits free now; for tests. */
  def available: Int = semaphore.availablePermits()

  /** `check` on `ec`, holding a permit until it has run; None, at once, when no permit is free. */
  def submit[A](check: => A)(using ec: ExecutionContext): Option[Future[A]] =
    if (!semaphore.tryAcquire()) None
    else {
      val released = new AtomicBoolean(false)
      def release(): Unit = if (released.compareAndSet(false, true)) semaphore.release()
      try {
        val result = Future { try check finally release() }
        // Also when the task never ran (the executor refused it): the future then fails without running `check`.
        result.onComplete(_ => release())(using ExecutionContext.parasitic)
        Some(result)
      } catch {
        case NonFatal(e) =>
          release()
          throw e
      }
    }
}
