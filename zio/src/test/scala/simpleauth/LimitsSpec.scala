package simpleauth

import java.util.concurrent.{CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.{AtomicInteger, AtomicReference}

import zio.*
import zio.http.*
import zio.test.*

/**
 * The three limits of §8 through `POST /token` (the routes without a server, the in-memory tables): the client
 * address's lock (before the database), the username's lock (no hash computed) and overload shedding.
 */
object LimitsSpec extends ZIOSpecDefault:
  /** The argon2id checks run, and a gate that holds them (while closed) to fill the admitted slots. */
  final class Checks:
    val argon2idRuns = new AtomicInteger(0)
    val entered      = new AtomicInteger(0)
    val gate         = new AtomicReference[CountDownLatch](null)
    def check(password: String, stored: String): Verification =
      if stored.startsWith("$argon2id$") then
        argon2idRuns.incrementAndGet()
        entered.incrementAndGet()
        Option(gate.get).foreach(_.await(30, TimeUnit.SECONDS))
      PasswordHashes.verify(password, stored)

  private val settings = RoutesSpec.testConfig.copy(limits =
    LimitSettings(loginMaxFailures = 3, loginFailureWindowSeconds = 300, loginIpMaxFailures = 2,
      trustedProxies = TrustedProxies.parse("127.0.0.1").toOption.get, maxPasswordChecks = 1)
  )

  private val checksLayer: ULayer[Checks & PasswordVerifier] = ZLayer.fromZIOEnvironment {
    for
      cores     <- Semaphore.make(4)
      admission <- PasswordCheckLimit.make(settings.limits.maxPasswordChecks)
      checks     = Checks()
      verifier   = PasswordVerifier.Live(PasswordHashes.newDummyArgon2id(), cores, admission, checks.check)
    yield ZEnvironment(checks).add[PasswordVerifier](verifier)
  }

  final case class Answer(status: Int, retryAfter: Option[String], body: String)

  def login(username: String, password: String, from: String): ZIO[Api.Env, Nothing, Answer] =
    val request = Request
      .post(URL(Path.root / "token"), Body.fromString(s"""{"username":"$username","password":"$password"}"""))
      .addHeader(Header.ContentType(MediaType.application.json))
      .addHeader("X-Forwarded-For", s"198.51.100.250, $from")
      .copy(remoteAddress = Some(java.net.InetAddress.getLoopbackAddress)) // a trusted proxy: the client is `from`
    ZIO.scoped(Api(Draining(), settings.limits.trustedProxies).routes.runZIO(request).flatMap(r =>
      r.body.asString.orDie.map(b => Answer(r.status.code, r.rawHeader("retry-after"), b))
    ))

  private val tooMany = """{"error":"temporarily_unavailable","error_description":"too many failed logins; try again later"}"""

  private def retryWithinWindow(a: Answer) = a.retryAfter.flatMap(_.toIntOption).exists(s => s >= 1 && s <= 300)

  def spec = suite("limits (§8)")(
    test("client address: locked at LOGIN_IP_MAX_FAILURES, before the database is asked, the right password too; others not") {
      for
        db      <- ZIO.service[InMemoryDatabase]
        before  <- Metrics.rejectionCount(Metrics.Rejection.AddressLocked)
        fails   <- ZIO.foreach(List("nope-1", "nope-2"))(p => login("john@example.com", p, "203.0.113.7"))
        asked   <- db.queries.get
        locked  <- login("john@example.com", "TopSecret0!", "203.0.113.7")
        other   <- login("nobody@example.com", "x", "203.0.113.7")
        asked2  <- db.queries.get
        after   <- Metrics.rejectionCount(Metrics.Rejection.AddressLocked)
        elsewhere <- login("john@example.com", "TopSecret0!", "203.0.113.8")
      yield assertTrue(
        fails.forall(_.status == 400),
        locked.status == 429, locked.body == tooMany, retryWithinWindow(locked),
        other.status == 429,
        asked2 == asked,
        after >= before + 2,
        elsewhere.status == 200
      )
    },
    test("username: locked at LOGIN_MAX_FAILURES (any case, any address), with the right password too, and no hash computed") {
      for
        checks  <- ZIO.service[Checks]
        before  <- Metrics.rejectionCount(Metrics.Rejection.UsernameLocked)
        fails   <- ZIO.foreach(List("a", "b", "c").zipWithIndex)((p, i) => login("jane@example.com", p, s"192.0.2.${i + 1}"))
        runs    <- ZIO.succeed(checks.argon2idRuns.get)
        locked  <- login("jane@example.com", "CorrectHorse9!", "192.0.2.10")
        upper   <- login("JANE@Example.com", "CorrectHorse9!", "192.0.2.11")
        runs2   <- ZIO.succeed(checks.argon2idRuns.get)
        after   <- Metrics.rejectionCount(Metrics.Rejection.UsernameLocked)
        john    <- login("john@example.com", "TopSecret0!", "192.0.2.12")
      yield assertTrue(
        fails.forall(_.status == 400), runs == 3,
        locked.status == 429, locked.body == tooMany, retryWithinWindow(locked),
        upper.status == 429,
        runs2 == runs,
        after >= before + 2,
        john.status == 200
      )
    },
    test("a success clears the username's count; the address's count stays") {
      for
        db     <- ZIO.service[InMemoryDatabase]
        _      <- login("john@example.com", "nope", "203.0.113.20")
        count  <- db.failureCount("john@example.com")
        ok     <- login("john@example.com", "TopSecret0!", "203.0.113.20")
        count2 <- db.failureCount("john@example.com")
        _      <- login("nobody@example.com", "x", "203.0.113.20")
        locked <- login("john@example.com", "TopSecret0!", "203.0.113.20")
      yield assertTrue(count == 1, ok.status == 200, count2 == 0, locked.status == 429)
    },
    test("overload: one argon2id check more than MAX_PASSWORD_CHECKS is 503 with Retry-After: 1 at once; HMAC logins still pass") {
      for
        checks  <- ZIO.service[Checks]
        latch    = new CountDownLatch(1)
        _       <- ZIO.succeed(checks.gate.set(latch))
        before  <- Metrics.rejectionCount(Metrics.Rejection.Overload)
        first   <- login("jane@example.com", "CorrectHorse9!", "192.0.2.50").fork
        _       <- ZIO.succeed(checks.entered.get).repeatUntil(_ >= 1).timeout(10.seconds)
        shedAt  <- Clock.nanoTime
        jane    <- login("jane@example.com", "CorrectHorse9!", "192.0.2.51")
        unknown <- login("nobody@example.com", "x", "192.0.2.52")
        broken  <- login("broken@example.com", "x", "192.0.2.53")
        shedEnd <- Clock.nanoTime
        john    <- login("john@example.com", "TopSecret0!", "192.0.2.54")
        after   <- Metrics.rejectionCount(Metrics.Rejection.Overload)
        _       <- ZIO.succeed(latch.countDown())
        firstA  <- first.join
      yield assertTrue(
        List(jane, unknown, broken).forall(a => a.status == 503 && a.retryAfter.contains("1") && a.body.contains("temporarily_unavailable")),
        (shedEnd - shedAt) < 5_000_000_000L,
        john.status == 200,
        after >= before + 3,
        firstA.status == 200
      )
    },
    test("a shed check is a failure of its address (LOGIN_IP_MAX_FAILURES sheds lock it), not of its username") {
      for
        checks  <- ZIO.service[Checks]
        db      <- ZIO.service[InMemoryDatabase]
        latch    = new CountDownLatch(1)
        _       <- ZIO.succeed(checks.gate.set(latch))
        _       <- ZIO.succeed(checks.entered.set(0))
        holder  <- login("jane@example.com", "CorrectHorse9!", "192.0.2.70").fork
        _       <- ZIO.succeed(checks.entered.get).repeatUntil(_ >= 1).timeout(10.seconds)
        shed    <- ZIO.foreach(List("ghost-1@example.com", "ghost-2@example.com"))(u => login(u, "x", "192.0.2.71"))
        locked  <- login("john@example.com", "TopSecret0!", "192.0.2.71")
        other   <- login("john@example.com", "TopSecret0!", "192.0.2.72")
        counted <- db.failureCount("ghost-1@example.com")
        _       <- ZIO.succeed(latch.countDown())
        held    <- holder.join
      yield assertTrue(
        shed.forall(_.status == 503),
        locked.status == 429, locked.body == tooMany, retryWithinWindow(locked),
        other.status == 200,
        counted == 0,
        held.status == 200
      )
    }
  ).provide(
    InMemoryDatabase.layer(maxFailures = 3, windowSeconds = 300),
    ZLayer.succeed(settings),
    AddressLimiterLayer.live,
    checksLayer,
    ZLayer.succeed(new UnusableHashLog()),
    RoutesSpec.signerLayer,
    InMemoryDatabase.jdbc, TokenService.live
  ) @@ TestAspect.withLiveClock @@ TestAspect.sequential @@ TestAspect.timeout(120.seconds)
