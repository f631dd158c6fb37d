package simpleauth

import java.lang.management.ManagementFactory
import java.util.UUID

import zio.*
import zio.json.ast.Json

/**
 * `signbench <seconds>`: how many token pairs this stack's own signing code mints on one thread, for the
 * benchmark's "crypto share" with the stack's own signer instead of `openssl speed`'s RSA figure.
 *
 * It builds the signer as `Main` does — ACCP installed before the key is parsed, the same `Settings`, the
 * same `KeyRing.live` — but opens no port and no pool. Then, on the calling thread, it runs the service's
 * `KeyRing.issue` (access token + ID token with `at_hash`, what POST /token signs, with whatever key type the
 * settings name: RS256, ES256 or EdDSA) for a fixed user:
 * 2 s untimed warm-up (JIT), then the given seconds timed. Each `issue` effect is run with
 * `Runtime.unsafe.run`, which runs an effect that never suspends (this one does not) to its end on the calling
 * thread, so that thread's CPU time is the whole cost. The result is one JSON line on stdout; anything else,
 * library logging included, goes to stderr.
 */
object SignBench:
  val WarmupSeconds = 2.0

  val Usage = "usage: simpleauth.SignBench <seconds>  (the timed duration: a positive number, e.g. 5 or 0.5)"

  /** John Doe of sql/seed.sql (id = md5('user:john@example.com')). */
  val sampleUser: User =
    User(UUID.fromString("953b48eb-02ef-f93e-f582-e9b9ce4685b5"), "johndoe", "John Doe", "john@example.com", passwordHash = "")

  /** The timed part. `tokenChars` adds up the length of every token made, so none of them is dead code. */
  final case class Result(tokenPairs: Long, seconds: Double, threadCpuSeconds: Double, tokenChars: Long, lastPair: TokenPair):
    def json(provider: String): String =
      def rounded(d: Double) = Json.Num(BigDecimal(d).setScale(6, BigDecimal.RoundingMode.HALF_UP))
      Json
        .Obj(
          "token_pairs"        -> Json.Num(tokenPairs),
          "seconds"            -> rounded(seconds),
          "thread_cpu_seconds" -> rounded(threadCpuSeconds),
          "provider"           -> Json.Str(provider)
        )
        .toString

  private val Decimal = """\+?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?""".r

  /** Exactly one argument, a plain decimal number that is positive and finite. */
  def parseSeconds(args: Seq[String]): Either[String, Double] =
    args match
      case Seq(arg @ Decimal()) =>
        val seconds = arg.toDouble
        if seconds > 0 && !seconds.isInfinite then Right(seconds)
        else Left(s"signbench: bad duration '$arg'; $Usage")
      case Seq(arg) => Left(s"signbench: bad duration '$arg'; $Usage")
      case _        => Left(Usage)

  /**
   * What `Main.run` does before it opens the pool and the port: native crypto first (before the key is parsed),
   * then the settings, then the service's `KeyRing`. Also gives why ACCP is unavailable, if it is.
   */
  val signer: IO[SettingsError, (KeyRing, Option[String])] = System.envs.orDie.flatMap(signerFrom)

  /** `signer` for the environment `env`. */
  def signerFrom(env: Map[String, String]): IO[SettingsError, (KeyRing, Option[String])] =
    for
      cfg            <- Main.settingsFrom(env) // the key loader installs the provider first
      noNativeCrypto <- ZIO.succeed(NativeCrypto.install())
      signer         <- ZIO.service[KeyRing].provideLayer(ZLayer.succeed(cfg) >>> KeyRing.live)
    yield (signer, noNativeCrypto)

  /** Issues token pairs on the calling thread: `warmupSeconds` untimed, then `seconds` timed. */
  def measure(signer: KeyRing, user: User, warmupSeconds: Double, seconds: Double): Result =
    val threads = ManagementFactory.getThreadMXBean
    if !threads.isCurrentThreadCpuTimeSupported then throw new UnsupportedOperationException("this JVM cannot measure a thread's CPU time")
    if !threads.isThreadCpuTimeEnabled then threads.setThreadCpuTimeEnabled(true)
    Unsafe.unsafe { implicit unsafe =>
      val runtime = Runtime.default
      def issue(): TokenPair = runtime.unsafe.run(signer.issue(user, None, java.util.UUID.randomUUID())).getOrThrowFiberFailure()
      def nanos(s: Double): Long = math.min((s * 1e9).toLong, Long.MaxValue / 4) // an absurd duration must not overflow the deadline

      val warmupEnd = java.lang.System.nanoTime() + nanos(warmupSeconds)
      while java.lang.System.nanoTime() < warmupEnd do issue()

      var pairs = 0L
      var chars = 0L
      var last  = TokenPair("", "", 0)
      val cpu0  = threads.getCurrentThreadCpuTime
      val t0    = java.lang.System.nanoTime()
      val end   = t0 + nanos(seconds)
      var now   = t0
      while now < end do
        last = issue()
        chars += last.accessToken.length + last.idToken.length
        pairs += 1
        now = java.lang.System.nanoTime()
      val cpu1 = threads.getCurrentThreadCpuTime
      Result(pairs, (now - t0) / 1e9, (cpu1 - cpu0) / 1e9, chars, last)
    }

  def main(args: Array[String]): Unit =
    val stdout = java.lang.System.out
    java.lang.System.setOut(java.lang.System.err) // the result is the only line on stdout; any log line goes to stderr
    val code = parseSeconds(args.toSeq) match
      case Left(usage) =>
        java.lang.System.err.println(usage)
        2
      case Right(seconds) =>
        Unsafe.unsafe(implicit unsafe => Runtime.default.unsafe.run(signer.either).getOrThrowFiberFailure()) match
          case Left(refused) =>
            java.lang.System.err.println(Main.refusal(refused))
            2
          case Right((signer, noNativeCrypto)) =>
            noNativeCrypto.foreach(why => java.lang.System.err.println(s"signbench: native crypto provider unavailable, signing with the JDK's providers: $why"))
            val keys = Unsafe.unsafe(implicit unsafe => Runtime.default.unsafe.run(signer.keys).getOrThrowFiberFailure())
            java.lang.System.err.println(s"signbench: kid=${keys.signing.kid} alg=${keys.signing.algorithm.name} signer=${keys.signer.provider}")
            val result = measure(signer, sampleUser, WarmupSeconds, seconds)
            stdout.println(result.json(keys.signer.provider))
            stdout.flush()
            0
    java.lang.System.exit(code)
