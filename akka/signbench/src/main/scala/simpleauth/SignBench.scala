package simpleauth

import java.lang.management.ManagementFactory
import java.util.UUID
import spray.json.{JsNumber, JsObject, JsString}

/**
 * The stack's own signing ceiling: how many token pairs (what POST /token signs) the service's
 * `TokenSigner` mints per second on one thread, with the service's settings, crypto provider and key (of any
 * of the three types: RS256, ES256, EdDSA); `provider` is the JCA provider that signer uses.
 * The benchmark compares this with `openssl speed` to tell the stack's signing cost from OpenSSL's.
 *
 * No port, no database, no actor system: settings are read and validated as at start-up (so
 * `DATABASE_URL` is parsed but never connected to), then the calling thread issues token pairs for
 * [[WarmupSeconds]] untimed (JIT) and for the given seconds timed. stdout gets exactly one JSON line;
 * anything else goes to stderr (logback, whose appender writes to stdout, is never initialised here).
 *
 * Built into its own jar (the `signbench` sub-project), so the service's jar does not carry it:
 * {{{java -cp target/simple-auth-akka.jar:target/simple-auth-akka-signbench.jar simpleauth.SignBench <seconds>}}}
 */
object SignBench {
  val WarmupSeconds = 2.0

  /** A fixed sample user: John Doe of the seed data (id = md5('user:john@example.com')). */
  val SampleUser: User = User(
    UUID.fromString("953b48eb-02ef-f93e-f582-e9b9ce4685b5"),
    "johndoe",
    "John Doe",
    "john@example.com",
    "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE="
  )

  /** The access token's `client_id`: the contract's default. */
  val SampleClientId = "public"

  private val Usage =
    "usage: simpleauth.SignBench <seconds>  (the timed duration: a positive number, e.g. 5 or 0.5)"

  /**
   * @param tokenChars the summed length of every token of the timed part, so that no signature is dead code
   * @param lastPair   the timed part's last pair, for checking what was measured; not reused by the loop
   */
  final case class Result(tokenPairs: Long, seconds: Double, threadCpuSeconds: Double, tokenChars: Long, lastPair: TokenPair) {
    def jsonLine(provider: String): String =
      JsObject(
        "token_pairs" -> JsNumber(tokenPairs),
        "seconds" -> JsNumber(seconds),
        "thread_cpu_seconds" -> JsNumber(threadCpuSeconds),
        "provider" -> JsString(provider)
      ).compactPrint
  }

  private val Decimal = """\+?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?""".r

  /** The one argument: a positive, finite number of seconds. Left is the usage line. */
  def parseSeconds(args: Seq[String]): Either[String, Double] =
    args match {
      case Seq(raw) if Decimal.matches(raw) =>
        // Decimal admits plain numbers only (no NaN, Infinity, hex or "5d"); 1e999 still overflows.
        val seconds = raw.toDouble
        if (seconds > 0 && !seconds.isInfinite) Right(seconds) else Left(s"$Usage; got '$raw'")
      case Seq(raw) => Left(s"$Usage; got '$raw'")
      case _        => Left(Usage)
    }

  /**
   * Issues token pairs for `user` on the calling thread: `warmupSeconds` untimed, then `seconds` timed
   * (at least one pair). Thread CPU time is the calling thread's, the JVM's own bookkeeping excluded.
   */
  def measure(signer: TokenSigner, user: User, warmupSeconds: Double, seconds: Double): Result = {
    val threads = ManagementFactory.getThreadMXBean

    val warmupNanos = toNanos(warmupSeconds)
    val warmupStart = System.nanoTime()
    var warmupChars = 0L
    while (System.nanoTime() - warmupStart < warmupNanos) {
      val pair = signer.issue(user, SampleClientId, UUID.randomUUID())
      warmupChars += pair.accessToken.length + pair.idToken.length
    }

    val timedNanos = toNanos(seconds)
    var pairs = 0L
    var chars = 0L
    var last: TokenPair = null
    val cpuStart = threads.getCurrentThreadCpuTime
    val start = System.nanoTime()
    var elapsed = 0L
    while ({
      last = signer.issue(user, SampleClientId, UUID.randomUUID())
      chars += last.accessToken.length + last.idToken.length
      pairs += 1
      elapsed = System.nanoTime() - start
      elapsed < timedNanos
    }) ()
    val cpu = threads.getCurrentThreadCpuTime - cpuStart

    // Both sums are used, so the JIT cannot drop a signature as dead code.
    if (warmupChars < 0 || chars <= 0) throw new IllegalStateException("no tokens issued")
    Result(pairs, elapsed / 1e9, cpu / 1e9, chars, last)
  }

  private def toNanos(seconds: Double): Long = (seconds * 1e9).toLong // saturates at Long.MaxValue

  def main(args: Array[String]): Unit = {
    val seconds = parseSeconds(args.toSeq) match {
      case Right(s) => s
      case Left(usage) =>
        System.err.println(usage)
        sys.exit(2)
    }
    // Exactly the service's start-up: settings and key (the key loader installs the provider first), then the signer.
    val settings = Settings.fromEnv().fold(App.refuseToStart, identity)
    val nativeCryptoUnavailable = NativeCrypto.install()
    // The service's signer records every pair in its signing histogram; so does this one (same work).
    val signer = KeySet.build(settings.keys, KeySet.TokenSettings.from(settings), Metrics()).fold(App.refuseToStart, identity).signer
    nativeCryptoUnavailable.foreach(why =>
      System.err.println(s"simple-auth-akka signbench: native crypto provider unavailable, signing with ${signer.provider}: $why"))

    if (!ManagementFactory.getThreadMXBean.isCurrentThreadCpuTimeSupported) {
      System.err.println("simple-auth-akka signbench: this JVM cannot measure thread CPU time")
      sys.exit(1)
    }
    val result = measure(signer, SampleUser, WarmupSeconds, seconds)
    println(result.jsonLine(signer.provider))
    System.out.flush()
  }
}
