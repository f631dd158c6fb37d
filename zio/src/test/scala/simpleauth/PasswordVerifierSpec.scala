package simpleauth

import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters.*

import zio.*
import zio.http.*
import zio.test.*

/**
 * Every refused login costs the same argon2id run: an unknown user and a user whose stored hash is unusable
 * (disabled, unknown scheme) both verify against the dummy hash, once, on the blocking pool. The hashing is
 * wrapped to record each call (the stored hash it ran against and the thread it ran on).
 */
object PasswordVerifierSpec extends ZIOSpecDefault:
  final case class Call(stored: String, thread: String)

  final case class Recorded(calls: ConcurrentLinkedQueue[Call], verifier: PasswordVerifier.Live):
    def argon2idRuns: List[Call] = calls.asScala.toList.filter(_.stored.startsWith("$argon2id$"))

  val recorded: ULayer[Recorded & PasswordVerifier] = ZLayer.fromZIOEnvironment {
    for
      limit    <- Semaphore.make(2)
      admitted <- PasswordCheckLimit.make(8)
      calls     = new ConcurrentLinkedQueue[Call]()
      verifier  = PasswordVerifier.Live(PasswordHashes.newDummyArgon2id(), limit, admitted, (password, stored) => {
                    calls.add(Call(stored, Thread.currentThread().getName))
                    PasswordHashes.verify(password, stored)
                  })
    yield ZEnvironment(Recorded(calls, verifier)).add[PasswordVerifier](verifier)
  }

  val users: ULayer[UserRepository & SessionRepository & DatabaseHealth] = InMemoryDatabase.layer() >>> InMemoryDatabase.asServices

  val invalidGrant = """{"error":"invalid_grant","error_description":"invalid username or password"}"""

  def login(username: String, password: String): ZIO[Api.Env, Nothing, (Status, String)] =
    val request = Request
      .post(URL(Path.root / "token"), Body.fromString(s"""{"username":"$username","password":"$password"}"""))
      .addHeader(Header.ContentType(MediaType.application.json))
    ZIO.scoped(Api(Draining()).routes.runZIO(request).flatMap(r => r.body.asString.orDie.map(b => (r.status, b))))

  def spec = suite("PasswordVerifier")(
    suite("through POST /token")(
      test("an unusable stored hash costs the unknown user's dummy argon2id run, on the blocking pool") {
        for
          rec     <- ZIO.service[Recorded]
          answer  <- login("broken@example.com", "TopSecret0!")
        yield assertTrue(
          answer == (Status.BadRequest, invalidGrant),
          rec.argon2idRuns.map(_.stored) == List(rec.verifier.dummyHash),
          rec.argon2idRuns.forall(_.thread.contains("blocking"))
        )
      },
      test("an unknown user costs the same dummy argon2id run") {
        for
          rec    <- ZIO.service[Recorded]
          answer <- login("nobody@example.com", "TopSecret0!")
        yield assertTrue(
          answer == (Status.BadRequest, invalidGrant),
          rec.argon2idRuns.map(_.stored) == List(rec.verifier.dummyHash),
          rec.argon2idRuns.forall(_.thread.contains("blocking"))
        )
      },
      test("a wrong password of an argon2id user runs its own hash once, no dummy") {
        for
          rec    <- ZIO.service[Recorded]
          answer <- login("jane@example.com", "not-her-password")
        yield assertTrue(
          answer == (Status.BadRequest, invalidGrant),
          rec.argon2idRuns.size == 1,
          !rec.argon2idRuns.exists(_.stored == rec.verifier.dummyHash)
        )
      },
      test("a wrong password of a legacy HMAC user costs the same dummy argon2id run (the decoy); a right one none") {
        for
          rec    <- ZIO.service[Recorded]
          answer <- login("john@example.com", "not-his-password")
          wrong   = rec.argon2idRuns
          _      <- ZIO.succeed(rec.calls.clear())
          right  <- login("john@example.com", "TopSecret0!")
        yield assertTrue(
          answer == (Status.BadRequest, invalidGrant),
          wrong.map(_.stored) == List(rec.verifier.dummyHash),
          wrong.forall(_.thread.contains("blocking")),
          right._1 == Status.Ok,
          rec.argon2idRuns.isEmpty
        )
      },
      test("an unusable hash is logged at warning once per user, not per login") {
        for
          before   <- ZTestLogger.logOutput
          _        <- ZIO.foreachDiscard(1 to 3)(_ => login("broken@example.com", "x"))
          output   <- ZTestLogger.logOutput
          reports   = output.drop(before.size).filter(_.message().contains("unusable password hash"))
          warnings  = reports.filter(_.logLevel == LogLevel.Warning)
        yield assertTrue(reports.size == 3, warnings.size == 1, !warnings.head.message().contains("$bcrypt$"))
      }
    ).provide(recorded, users, RoutesSpec.signerLayer, ZLayer.succeed(new UnusableHashLog()), InMemoryDatabase.jdbc, TokenService.live,
      ZLayer.succeed(RoutesSpec.testConfig), AddressLimiterLayer.live),
    test("verify of a legacy HMAC mismatch pays the decoy argon2id run and is counted once, as hmac-sha256 mismatch") {
      val mismatch = "simpleauth_password_checks_total{result=\"mismatch\",scheme=\"hmac-sha256\"}"
      val legacy   = Vectors.passwords.find(_.name == "legacy-john").get.hash
      for
        rec    <- ZIO.service[Recorded]
        before <- Metrics.scrape(ZIO.succeed(PoolState(0, 0, 0, 0)))
        result <- rec.verifier.verify("wrong", legacy)
        after  <- Metrics.scrape(ZIO.succeed(PoolState(0, 0, 0, 0)))
      yield assertTrue(
        result == Verification.Mismatch,
        rec.argon2idRuns.map(_.stored) == List(rec.verifier.dummyHash),
        checks(after) == checks(before).updated(mismatch, checks(before).getOrElse(mismatch, 0.0) + 1)
      )
    }.provide(recorded),
    test("verify of an unusable stored hash pays the decoy argon2id run and is counted once, as unusable (not as dummy)") {
      val unusable = "simpleauth_password_checks_total{result=\"unusable\",scheme=\"unknown\"}"
      for
        rec    <- ZIO.service[Recorded]
        before <- Metrics.scrape(ZIO.succeed(PoolState(0, 0, 0, 0)))
        result <- rec.verifier.verify("x", "$bcrypt$nope")
        after  <- Metrics.scrape(ZIO.succeed(PoolState(0, 0, 0, 0)))
      yield assertTrue(
        result.isInstanceOf[Verification.Unusable],
        rec.argon2idRuns.map(_.stored) == List(rec.verifier.dummyHash),
        checks(after) == checks(before).updated(unusable, checks(before).getOrElse(unusable, 0.0) + 1)
      )
    }.provide(recorded)
  ) @@ TestAspect.sequential

  /** The password-check series of an exposition and their values. */
  private def checks(text: String): Map[String, Double] =
    text.linesIterator.filter(_.startsWith("simpleauth_password_checks_total{")).map { line =>
      val i = line.lastIndexOf(' ')
      line.substring(0, i) -> line.substring(i + 1).toDouble
    }.toMap
