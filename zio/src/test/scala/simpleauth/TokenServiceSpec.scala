package simpleauth

import com.nimbusds.jose.JWSObject
import zio.*
import zio.test.*

/** The login flow on its own: lookup → verify → issue, and its two refusals. */
object TokenServiceSpec extends ZIOSpecDefault:
  def spec = suite("TokenService")(
    test("a known user with the right password gets a token pair about that user") {
      for pair <- TokenService.issue(TokenRequest("John@Example.com", "TopSecret0!"))
      yield assertTrue(
        pair.expiresIn == 600L,
        JWSObject.parse(pair.idToken).getPayload.toJSONObject.get("email") == "john@example.com"
      )
    },
    test("a wrong password, an unknown user and an unusable hash are all invalid_grant") {
      for
        wrong   <- TokenService.issue(TokenRequest("john@example.com", "nope")).flip
        unknown <- TokenService.issue(TokenRequest("nobody@example.com", "TopSecret0!")).flip
        broken  <- TokenService.issue(TokenRequest("broken@example.com", "TopSecret0!")).flip
      yield assertTrue(List(wrong, unknown, broken).forall(_ == ApiError.InvalidGrant))
    },
    test("after the lookup on the blocking pool, the password check (and the signing after it) leave that pool") {
      for
        users    <- ZIO.service[InMemoryUsers]
        verifier <- ZIO.service[PasswordVerifier]
        signer   <- ZIO.service[TokenSigner]
        unusable <- ZIO.service[UnusableHashLog]
        threads  <- Ref.make(Map.empty[String, String])
        here      = (step: String) => ZIO.succeed(Thread.currentThread.getName).flatMap(t => threads.update(_ + (step -> t)))
        blockingLookup = new UserRepository:
          def findByEmail(email: String) = ZIO.blocking(here("lookup") *> users.findByEmail(email))
        recording = new PasswordVerifier:
          def verify(password: String, storedHash: String) = here("check") *> verifier.verify(password, storedHash)
          def verifyUnknownUser(password: String)          = verifier.verifyUnknownUser(password)
        pair <- TokenService.Live(blockingLookup, recording, signer, unusable).issue(TokenRequest("john@example.com", "TopSecret0!"))
        seen <- threads.get
      yield assertTrue(
        pair.accessToken.nonEmpty,
        seen("lookup").startsWith("zio-default-blocking"),
        !seen("check").startsWith("zio-default-blocking")
      )
    },
    test("the database down is temporarily_unavailable") {
      for
        users <- ZIO.service[InMemoryUsers]
        _     <- users.down.set(true)
        error <- TokenService.issue(TokenRequest("john@example.com", "TopSecret0!")).flip
      yield assertTrue(error == ApiError.TemporarilyUnavailable)
    }
  ).provide(
    InMemoryUsers.layer,
    PasswordVerifier.live,
    UnusableHashLog.live,
    RoutesSpec.signerLayer,
    TokenService.live
  ) @@ TestAspect.withLiveClock
