package simpleauth

import zio.*
import zio.test.*

/**
 * Overload shedding: permits taken while a check runs and given back however it ends; one check too many is shed
 * at once; through `PasswordVerifier`, argon2id checks (stored, dummy, unusable-hash decoy) are bounded, HMAC ones not.
 */
object PasswordCheckLimitSpec extends ZIOSpecDefault:
  def spec = suite("PasswordCheckLimit")(
    test("a permit is held while the check runs and given back when it ends") {
      for
        limiter <- PasswordCheckLimit.make(2)
        inside  <- limiter.admit(limiter.available)
        after   <- limiter.available
      yield assertTrue(inside.contains(1L), after == 2L)
    },
    test("given back on failure, on a defect and on interruption too") {
      for
        limiter <- PasswordCheckLimit.make(1)
        failed  <- limiter.admit(ZIO.fail("no")).either
        _       <- limiter.admit(ZIO.die(new RuntimeException("boom"))).exit
        started <- Promise.make[Nothing, Unit]
        fiber   <- limiter.admit(started.succeed(()) *> ZIO.never).fork
        _       <- started.await
        during  <- limiter.available
        _       <- fiber.interrupt
        after   <- limiter.available
      yield assertTrue(failed == Left("no"), during == 0L, after == 1L)
    },
    test("no permit free: None at once, the check not run, nothing queued") {
      for
        limiter <- PasswordCheckLimit.make(1)
        started <- Promise.make[Nothing, Unit]
        release <- Promise.make[Nothing, Unit]
        holder  <- limiter.admit(started.succeed(()) *> release.await).fork
        _       <- started.await
        ran     <- Ref.make(false)
        shed    <- limiter.admit(ran.set(true)).timeout(1.second)
        _       <- release.succeed(())
        _       <- holder.join
        didRun  <- ran.get
        again   <- limiter.admit(ZIO.succeed(7))
      yield assertTrue(shed.contains(None), !didRun, again.contains(7))
    } @@ TestAspect.withLiveClock,
    test("PasswordVerifier: argon2id checks beyond MAX_PASSWORD_CHECKS are shed (503, counted); HMAC checks are not bounded") {
      val jane = Vectors.passwords.find(_.name == "argon2id-owasp-floor").get
      val john = Vectors.passwords.find(_.name == "legacy-john").get
      for
        cores     <- Semaphore.make(4)
        admission <- PasswordCheckLimit.make(1)
        entered   <- Promise.make[Nothing, Unit]
        gate      <- Promise.make[Nothing, Unit]
        runtime   <- ZIO.runtime[Any]
        blockingCheck = (password: String, stored: String) =>
                          if stored.startsWith("$argon2id$") then
                            Unsafe.unsafe(implicit u => runtime.unsafe.run(entered.succeed(()) *> gate.await).getOrThrow())
                          PasswordHashes.verify(password, stored)
        verifier   = PasswordVerifier.Live(PasswordHashes.newDummyArgon2id(), cores, admission, blockingCheck)
        before    <- Metrics.rejectionCount(Metrics.Rejection.Overload)
        first     <- verifier.verify(jane.password, jane.hash).fork
        _         <- entered.await
        stored    <- verifier.verify(jane.password, jane.hash).either
        dummy     <- verifier.verifyUnknownUser("x").either
        decoy     <- verifier.verify("x", "$disabled$x").either
        legacy    <- verifier.verify(john.password, john.hash).either
        after     <- Metrics.rejectionCount(Metrics.Rejection.Overload)
        _         <- gate.succeed(())
        result    <- first.join
        free      <- admission.available
      yield assertTrue(
        stored == Left(ApiError.TemporarilyUnavailable),
        dummy == Left(ApiError.TemporarilyUnavailable),
        decoy == Left(ApiError.TemporarilyUnavailable),
        legacy == Right(Verification.Match),
        after >= before + 3,
        result == Verification.Match,
        free == 1L
      )
    } @@ TestAspect.withLiveClock
  )
