package simpleauth

import java.util.UUID
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
      reported <- Ref.make(Set.empty[UUID])
      calls     = new ConcurrentLinkedQueue[Call]()
      verifier  = PasswordVerifier.Live(Hashes.newDummyArgon2id(), limit, reported, (password, stored) => {
                    calls.add(Call(stored, Thread.currentThread().getName))
                    Hashes.verify(password, stored)
                  })
    yield ZEnvironment(Recorded(calls, verifier)).add[PasswordVerifier](verifier)
  }

  val users: ULayer[UserRepository] = InMemoryUsers.layer >>> ZLayer.fromFunction((u: InMemoryUsers) => u: UserRepository)

  val invalidGrant = """{"error":"invalid_grant","error_description":"invalid username or password"}"""

  def login(username: String, password: String): ZIO[Api.Env, Nothing, (Status, String)] =
    val request = Request
      .post(URL(Path.root / "token"), Body.fromString(s"""{"username":"$username","password":"$password"}"""))
      .addHeader(Header.ContentType(MediaType.application.json))
    ZIO.scoped(Api.routes.runZIO(request).flatMap(r => r.body.asString.orDie.map(b => (r.status, b))))

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
      test("an unusable hash is logged at warning once per user, not per login") {
        for
          before   <- ZTestLogger.logOutput
          _        <- ZIO.foreachDiscard(1 to 3)(_ => login("broken@example.com", "x"))
          output   <- ZTestLogger.logOutput
          reports   = output.drop(before.size).filter(_.message().contains("unusable password hash"))
          warnings  = reports.filter(_.logLevel == LogLevel.Warning)
        yield assertTrue(reports.size == 3, warnings.size == 1, !warnings.head.message().contains("$bcrypt$"))
      }
    ).provide(recorded, users, RoutesSpec.signerLayer),
    suite("reportUnusable")(
      test("warns once per user, then at debug; remembers at most MaxReported users") {
        val (a, b) = (UUID.randomUUID(), UUID.randomUUID())
        def about(ids: Set[UUID])(log: Chunk[ZTestLogger.LogEntry]) = log.filter(e => ids.exists(id => e.message().contains(id.toString)))
        def at(level: LogLevel)(log: Chunk[ZTestLogger.LogEntry]) = log.count(_.logLevel == level)
        val others = List.fill(PasswordVerifier.MaxReported + 5)(UUID.randomUUID())
        for
          verifier <- ZIO.service[PasswordVerifier]
          _        <- verifier.reportUnusable(a, "unknown hash scheme").repeatN(2)
          _        <- verifier.reportUnusable(b, "unknown hash scheme")
          first    <- ZTestLogger.logOutput.map(about(Set(a, b)))
          _        <- ZIO.foreachDiscard(others)(verifier.reportUnusable(_, "x"))
          rest     <- ZTestLogger.logOutput.map(about(others.toSet))
        yield assertTrue(
          at(LogLevel.Warning)(first) == 2,
          at(LogLevel.Debug)(first) == 2,
          at(LogLevel.Warning)(rest) == PasswordVerifier.MaxReported - 2,
          at(LogLevel.Debug)(rest) == 7
        )
      }.provide(PasswordVerifier.live) @@ TestAspect.silentLogging, // ZTestLogger still records; no 10,000 lines on the console
      test("padUnusable is not counted as a check of its own (verify already counted the login)") {
        for
          rec    <- ZIO.service[Recorded]
          before <- ServiceMetrics.scrape(ZIO.succeed(PoolState(0, 0, 0, 0)))
          _      <- rec.verifier.padUnusable("x")
          after  <- ServiceMetrics.scrape(ZIO.succeed(PoolState(0, 0, 0, 0)))
        yield assertTrue(
          rec.argon2idRuns.map(_.stored) == List(rec.verifier.dummyHash),
          checks(after) == checks(before)
        )
      }.provide(recorded)
    )
  ) @@ TestAspect.sequential

  /** The password-check series of an exposition. */
  private def checks(text: String): List[String] =
    text.linesIterator.filter(_.startsWith("simpleauth_password_checks_total{")).toList.sorted
