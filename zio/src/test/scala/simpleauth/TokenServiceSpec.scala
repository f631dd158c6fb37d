package simpleauth

import com.nimbusds.jose.JWSObject
import zio.*
import zio.test.*

/** The flows on their own: the password grant, the refresh grant, revocation, and their refusals. */
object TokenServiceSpec extends ZIOSpecDefault:
  private def claims(jwt: String) = JWSObject.parse(jwt).getPayload.toJSONObject

  private def johnFor(client: Option[String]) = TokenRequest.Password("john@example.com", "TopSecret0!", client)
  private val john = johnFor(None)

  def spec = suite("TokenService")(
    test("a known user with the right password gets a token pair about that user and a new session") {
      for
        db     <- ZIO.service[InMemoryDatabase]
        issued <- TokenService.issue(TokenRequest.Password("John@Example.com", "TopSecret0!"))
        row    <- db.row(issued.refreshToken)
      yield assertTrue(
        issued.pair.expiresIn == 600L,
        claims(issued.pair.idToken).get("email") == "john@example.com",
        RefreshToken.isWellFormed(issued.refreshToken),
        row.map(_.familyId.toString).contains(claims(issued.pair.accessToken).get("sid").toString),
        row.map(_.clientId).contains("public"),
        claims(issued.pair.idToken).get("aud") == "public",           // the ID token's audience: the client
        claims(issued.pair.accessToken).get("aud") == "channel-api",  // the access token's: the resource
        row.exists(r => r.expiresAt == r.sessionExpiresAt.minusSeconds(7776000 - 3600)) // the TTL, within the session
      )
    },
    test("the ID token is addressed to the request's client_id, also after a refresh") {
      for
        first  <- TokenService.issue(johnFor(Some("web")))
        second <- TokenService.issue(TokenRequest.Refresh(first.refreshToken))
      yield assertTrue(
        claims(first.pair.idToken).get("aud") == "web", claims(second.pair.idToken).get("aud") == "web",
        claims(second.pair.accessToken).get("aud") == "channel-api"
      )
    },
    test("a login whose user's hash changed after it was read is invalid_grant, no session; its reservation stays") {
      for
        db       <- ZIO.service[InMemoryDatabase]
        verifier <- ZIO.service[PasswordVerifier]
        signer   <- ZIO.service[KeyRing]
        unusable <- ZIO.service[UnusableHashLog]
        limiter  <- ZIO.service[AddressLimiter]
        jdbc     <- ZIO.service[JdbcExecutor]
        original  = db.users("john@example.com")
        racing = new UserRepository:
          def reserveLogin(username: String) =
            db.reserveLogin(username) <* db.putUser(original.copy(passwordHash = db.users("jane@example.com").passwordHash))
          def releaseLogin(username: String) = db.releaseLogin(username)
        error  <- TokenService.Live(racing, db, verifier, signer, unusable, limiter, "public", jdbc.executor).issue(john, Some("192.0.2.99")).flip
        count  <- db.failureCount("john@example.com")
        tokens <- db.tokens.get
        _      <- db.putUser(original)
        _      <- db.failures.set(Map.empty)
      yield assertTrue(error == ApiError.InvalidGrant, count == 1, tokens.isEmpty, limiter.count("192.0.2.99") == 1)
    },
    test("a wrong password, an unknown user and an unusable hash are all invalid_grant, each a counted failure") {
      for
        db      <- ZIO.service[InMemoryDatabase]
        wrong   <- TokenService.issue(TokenRequest.Password("john@example.com", "nope")).flip
        unknown <- TokenService.issue(TokenRequest.Password("nobody@example.com", "TopSecret0!")).flip
        broken  <- TokenService.issue(TokenRequest.Password("Broken@example.com", "TopSecret0!")).flip
        counts  <- ZIO.foreach(List("john@example.com", "nobody@example.com", "broken@example.com"))(db.failureCount)
        _       <- TokenService.issue(john)
        cleared <- db.failureCount("john@example.com")
      yield assertTrue(List(wrong, unknown, broken).forall(_ == ApiError.InvalidGrant), counts == List(1, 1, 1), cleared == 0)
    },
    test("a password grant runs the lookup, the check and the session on one of the JDBC executor's threads") {
      for
        db       <- ZIO.service[InMemoryDatabase]
        verifier <- ZIO.service[PasswordVerifier]
        signer   <- ZIO.service[KeyRing]
        unusable <- ZIO.service[UnusableHashLog]
        limiter  <- ZIO.service[AddressLimiter]
        jdbc     <- ZIO.service[JdbcExecutor]
        threads  <- Ref.make(Map.empty[String, String])
        here      = (step: String) => ZIO.succeed(Thread.currentThread.getName).flatMap(t => threads.update(_ + (step -> t)))
        lookup = new UserRepository:
          def reserveLogin(username: String) = here("lookup") *> db.reserveLogin(username)
          def releaseLogin(username: String) = db.releaseLogin(username)
        recording = new PasswordVerifier:
          def verify(password: String, storedHash: String) = here("check") *> verifier.verify(password, storedHash)
          def verifyUnknownUser(password: String)          = verifier.verifyUnknownUser(password)
        session = new SessionRepository:
          def start(username: String, tokenHash: Array[Byte], familyId: java.util.UUID, userId: java.util.UUID, clientId: String,
                    verifiedHash: String) = here("session") *> db.start(username, tokenHash, familyId, userId, clientId, verifiedHash)
          def rotate(presented: Array[Byte], clientId: Option[String], successor: Array[Byte]) = db.rotate(presented, clientId, successor)
          def revokeUsed(presented: Array[Byte]) = db.revokeUsed(presented)
          def revoke(presented: Array[Byte])     = db.revoke(presented)
        issued <- TokenService.Live(lookup, session, recording, signer, unusable, limiter, "public", jdbc.executor).issue(john, None)
        seen   <- threads.get
      yield assertTrue(
        issued.pair.accessToken.nonEmpty,
        seen("lookup").startsWith("simple-auth-jdbc-"),
        seen("check") == seen("lookup"),
        seen("session") == seen("lookup")
      )
    },
    test("the database down is temporarily_unavailable, for both grants and for revocation") {
      for
        db      <- ZIO.service[InMemoryDatabase]
        issued  <- TokenService.issue(john)
        _       <- db.down.set(true)
        login   <- TokenService.issue(john).flip
        refresh <- TokenService.issue(TokenRequest.Refresh(issued.refreshToken)).flip
        revoke  <- TokenService.revoke(RevokeRequest(issued.refreshToken)).flip
        _       <- db.down.set(false)
      yield assertTrue(List(login, refresh, revoke).forall(_ == ApiError.TemporarilyUnavailable))
    },
    test("a refresh: a new pair for the same session and client, the user as stored now, a new refresh token") {
      for
        first  <- TokenService.issue(johnFor(Some("web")))
        second <- TokenService.issue(TokenRequest.Refresh(first.refreshToken))
        third  <- TokenService.issue(TokenRequest.Refresh(second.refreshToken, Some("web")))
      yield
        val (a1, a2, a3) = (claims(first.pair.accessToken), claims(second.pair.accessToken), claims(third.pair.accessToken))
        assertTrue(
          Set(first.refreshToken, second.refreshToken, third.refreshToken).size == 3,
          a2.get("sid") == a1.get("sid"), a3.get("sid") == a1.get("sid"),
          a2.get("client_id") == "web", a3.get("client_id") == "web",
          claims(second.pair.idToken).get("email") == "john@example.com",
          a2.get("jti") != a1.get("jti")
        )
    },
    test("reuse of a used token is invalid_grant and revokes the family (the newest token too), counted once") {
      for
        first  <- TokenService.issue(john)
        second <- TokenService.issue(TokenRequest.Refresh(first.refreshToken))
        before <- Metrics.rejectionCount(Metrics.Rejection.RefreshReuse)
        reuse  <- TokenService.issue(TokenRequest.Refresh(first.refreshToken)).flip
        after  <- Metrics.rejectionCount(Metrics.Rejection.RefreshReuse)
        newest <- TokenService.issue(TokenRequest.Refresh(second.refreshToken)).flip
        again  <- TokenService.issue(TokenRequest.Refresh(first.refreshToken)).flip
        last   <- Metrics.rejectionCount(Metrics.Rejection.RefreshReuse)
      yield assertTrue(
        reuse == ApiError.InvalidRefreshToken, newest == ApiError.InvalidRefreshToken, again == ApiError.InvalidRefreshToken,
        after >= before + 1, last == after
      )
    },
    test("another client's token, an unknown one and a malformed one are invalid_grant; a malformed one asks no database") {
      for
        db       <- ZIO.service[InMemoryDatabase]
        first    <- TokenService.issue(johnFor(Some("web")))
        other    <- TokenService.issue(TokenRequest.Refresh(first.refreshToken, Some("mobile"))).flip
        unknown  <- TokenService.issue(TokenRequest.Refresh(RefreshToken.generate())).flip
        asked    <- db.queries.get
        bad      <- ZIO.foreach(List("short", "x" * 44, first.refreshToken.dropRight(1) + "="))(t => TokenService.issue(TokenRequest.Refresh(t)).flip)
        asked2   <- db.queries.get
        stillOk  <- TokenService.issue(TokenRequest.Refresh(first.refreshToken, Some("web")))
      yield assertTrue(
        other == ApiError.InvalidRefreshToken, unknown == ApiError.InvalidRefreshToken,
        bad.forall(_ == ApiError.InvalidRefreshToken), asked2 == asked,
        stillOk.refreshToken.nonEmpty
      )
    },
    test("every session of a user whose stored hash changed (disabled, reset) ends at its next refresh") {
      for
        db      <- ZIO.service[InMemoryDatabase]
        user     = db.users("john@example.com")
        results <- ZIO.foreach(List("$disabled$" + user.passwordHash, db.users("jane@example.com").passwordHash)) { changed =>
                     for
                       one    <- TokenService.issue(john)
                       two    <- TokenService.issue(johnFor(Some("web")))
                       _      <- db.putUser(user.copy(passwordHash = changed))
                       errors <- ZIO.foreach(List(one, two))(t => TokenService.issue(TokenRequest.Refresh(t.refreshToken)).flip)
                       rows   <- ZIO.foreach(List(one, two))(t => db.row(t.refreshToken))
                       _      <- db.putUser(user)
                     yield errors.forall(_ == ApiError.InvalidRefreshToken) && rows.flatten.forall(_.usedAt.isEmpty)
                   }
      yield assertTrue(results == List(true, true))
    },
    test("a refresh token expires at the earlier of its TTL and its session's end; rotation never extends the session") {
      for
        db       <- InMemoryDatabase.make(maxLifetimeSeconds = 1000) // below the TTL (3600)
        verifier <- ZIO.service[PasswordVerifier]
        signer   <- ZIO.service[KeyRing]
        unusable <- ZIO.service[UnusableHashLog]
        limiter  <- ZIO.service[AddressLimiter]
        jdbc     <- ZIO.service[JdbcExecutor]
        service   = TokenService.Live(db, db, verifier, signer, unusable, limiter, "public", jdbc.executor)
        first    <- service.issue(john, None)
        one      <- db.row(first.refreshToken).map(_.get)
        second   <- service.issue(TokenRequest.Refresh(first.refreshToken), None)
        two      <- db.row(second.refreshToken).map(_.get)
      yield assertTrue(one.expiresAt == one.sessionExpiresAt, two.sessionExpiresAt == one.sessionExpiresAt,
        !two.expiresAt.isAfter(one.sessionExpiresAt))
    },
    test("revoke: the family of a well-formed token; nothing asked for anything else") {
      for
        db     <- ZIO.service[InMemoryDatabase]
        first  <- TokenService.issue(john)
        second <- TokenService.issue(TokenRequest.Refresh(first.refreshToken))
        _      <- TokenService.revoke(RevokeRequest(first.refreshToken))
        after  <- TokenService.issue(TokenRequest.Refresh(second.refreshToken)).flip
        asked  <- db.queries.get
        _      <- TokenService.revoke(RevokeRequest(second.pair.accessToken))
        asked2 <- db.queries.get
      yield assertTrue(after == ApiError.InvalidRefreshToken, asked2 == asked)
    }
  ).provide(
    InMemoryDatabase.layer(),
    ZLayer.succeed(RoutesSpec.testConfig),
    AddressLimiterLayer.live,
    PasswordVerifier.live,
    ZLayer.succeed(new UnusableHashLog()),
    RoutesSpec.signerLayer,
    InMemoryDatabase.jdbc, TokenService.live
  ) @@ TestAspect.withLiveClock @@ TestAspect.sequential
