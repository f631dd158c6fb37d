package simpleauth

import com.nimbusds.jwt.SignedJWT
import java.net.InetAddress
import java.time.Instant
import java.util.UUID
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration.*
import scala.jdk.CollectionConverters.*

class TokenServiceSpec extends AnyWordSpec with Matchers {
  private val john = User(UUID.randomUUID(), "johndoe", "John Doe", "john@example.com",
    "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE=")
  private val jane = User(UUID.randomUUID(), "janeroe", "Jane Roe", "jane@example.com",
    "$argon2id$v=19$m=19456,t=2,p=1$/aNuSw+NVpEX1i/cSRL/0Q$7ANI+9Bn7BQexYE+jCxcw3Ys0DheKsm8wAf+7WstZAs")
  private val broken = User(UUID.randomUUID(), "broken", "Broken Hash", "broken@example.com", "$bcrypt$2b$10$xyz")
  private val address = InetAddress.getByName("192.0.2.7")

  /** One service over a fresh store, with what a test needs to look at. */
  private final class Fixture(
      maxFailures: Int = 1000000,
      ipMaxFailures: Int = 1000000,
      permits: Int = 1000,
      defaultClientId: String = "default-client",
      maxLifetimeSeconds: Int = 7776000,
      storeOf: Int => InMemoryStore = null
  ) {
    val store: InMemoryStore = Option(storeOf).map(_(maxFailures))
      .getOrElse(new InMemoryStore(List(john, jane, broken), maxFailures = maxFailures, maxLifetimeSeconds = maxLifetimeSeconds))
    val metrics: Metrics = TestKeys.metrics()
    val passwords = new PasswordVerifier(metrics)
    val unusable = new UnusableHashLog(log = new LogCapture("token-service").logger)
    val addresses = new AddressLimiter(ipMaxFailures, 300)
    val checks = new PasswordCheckLimit(permits)
    val service = new TokenService(store, store, passwords, TestRoutes.keys(metrics), unusable,
      ExecutionContext.global, metrics, addresses, checks, defaultClientId)

    def await[A](f: Future[A]): A = Await.result(f, 10.seconds)
    def login(username: String, password: String, clientId: Option[String] = None, from: Option[InetAddress] = Some(address)) =
      await(service.grant(TokenRequest.Password(username, password, clientId), from))
    def refresh(token: String, clientId: Option[String] = None) =
      await(service.grant(TokenRequest.Refresh(token, clientId), Some(address)))
    def issued(result: Either[ApiError, IssuedTokens]): IssuedTokens = result.fold(e => fail(s"refused: $e"), identity)
    def rejections(reason: String): Double = metrics.registry.get("simpleauth.rejections").tag("reason", reason).counter().count()
    def passwordChecks: Double = metrics.registry.get("simpleauth.password.checks").counters().asScala.map(_.count).sum
    def addressCount: Int = addresses.count(ClientAddress.limitKey(address))
  }

  private def claims(token: String) = SignedJWT.parse(token).getJWTClaimsSet

  "the password grant" should {
    "issue a token pair and a refresh token that starts a session, sid = its family" in {
      val f = new Fixture()
      val tokens = f.issued(f.login("john@example.com", "TopSecret0!"))
      tokens.tokens.expiresIn shouldBe 600
      Vectors.verifies(tokens.tokens.idToken, Vectors.devKey) shouldBe true
      RefreshToken.isWellFormed(tokens.refreshToken) shouldBe true
      val row = f.store.row(tokens.refreshToken).getOrElse(fail("no refresh token stored"))
      row.userId shouldBe john.id
      row.clientId shouldBe "default-client"
      claims(tokens.tokens.accessToken).getStringClaim("sid") shouldBe row.familyId.toString
      claims(tokens.tokens.idToken).getStringClaim("sid") shouldBe row.familyId.toString
      claims(tokens.tokens.idToken).getSubject shouldBe john.id.toString
      claims(tokens.tokens.accessToken).getStringClaim("client_id") shouldBe "default-client"
      claims(tokens.tokens.idToken).getAudience.asScala shouldBe List("default-client") // the ID token's audience: the client
      claims(tokens.tokens.accessToken).getAudience.asScala shouldBe List("channel-api") // the access token's: the resource
      row.expiresAt shouldBe row.sessionExpiresAt.minusSeconds(7776000 - 86400) // the TTL, within the session's lifetime
    }

    "address the ID token to the request's client_id" in {
      val f = new Fixture()
      val tokens = f.issued(f.login("john@example.com", "TopSecret0!", Some("cli")))
      claims(tokens.tokens.idToken).getAudience.asScala shouldBe List("cli")
      claims(tokens.tokens.accessToken).getAudience.asScala shouldBe List("channel-api")
    }

    "start a new session on every login, with the request's client_id" in {
      val f = new Fixture()
      val one = f.issued(f.login("john@example.com", "TopSecret0!", Some("cli")))
      val two = f.issued(f.login("john@example.com", "TopSecret0!"))
      claims(one.tokens.accessToken).getStringClaim("client_id") shouldBe "cli"
      f.store.row(one.refreshToken).map(_.clientId) shouldBe Some("cli")
      one.refreshToken should not be two.refreshToken
      f.store.row(one.refreshToken).map(_.familyId) should not be f.store.row(two.refreshToken).map(_.familyId)
    }

    "refuse a wrong password (legacy or argon2id), an unknown user and an unusable hash alike, each after one argon2id run" in {
      val f = new Fixture()
      f.login("jane@example.com", "wrong") shouldBe Left(ApiError.invalidGrant)
      f.passwords.equalisationCount shouldBe 0 // a real argon2id check, no dummy work on top
      f.login("john@example.com", "wrong") shouldBe Left(ApiError.invalidGrant)
      f.passwords.equalisationCount shouldBe 1 // the legacy mismatch's decoy
      f.login("Nobody@example.com", "TopSecret0!") shouldBe Left(ApiError.invalidGrant)
      f.passwords.equalisationCount shouldBe 2
      f.login("broken@example.com", "TopSecret0!") shouldBe Left(ApiError.invalidGrant)
      f.passwords.equalisationCount shouldBe 3
      f.passwordChecks shouldBe 4 // each counted once: the decoy is not counted separately
      f.store.failureCount("john@example.com") shouldBe Some(1)
      f.store.failureCount("nobody@example.com") shouldBe Some(1) // unknown usernames count too
      f.store.failureCount("broken@example.com") shouldBe Some(1)
      f.addressCount shouldBe 4 // each failure stays reserved for the address
      f.issued(f.login("john@example.com", "TopSecret0!"))
      f.passwords.equalisationCount shouldBe 3 // a legacy match runs no argon2id
    }

    "give the address's reservation back on success, keep it on a failure" in {
      val f = new Fixture()
      f.issued(f.login("john@example.com", "TopSecret0!"))
      f.addressCount shouldBe 0
      f.login("john@example.com", "wrong")
      f.addressCount shouldBe 1
    }

    "refuse, as a wrong password, a login whose user's hash changed after it was read; both reservations stay" in {
      val changed = john.copy(passwordHash = "$hmac-sha256$AAAAAAAAAAAAAAAAAAAAAA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE=")
      val f = new Fixture(storeOf = max => new InMemoryStore(List(john), maxFailures = max) {
        override def reserveLogin(username: String): Future[LoginLookup] =
          super.reserveLogin(username).map { lookup => putUser(changed); lookup }(using ExecutionContext.parasitic)
      })
      f.login("john@example.com", "TopSecret0!") shouldBe Left(ApiError.invalidGrant)
      f.store.rows shouldBe Nil // no session
      f.store.failureCount("john@example.com") shouldBe Some(1)
      f.addressCount shouldBe 1
    }

    "clear the username's failure count on success, but not the address's" in {
      val f = new Fixture(ipMaxFailures = 2)
      f.login("john@example.com", "wrong")
      f.store.failureCount("john@example.com") shouldBe Some(1)
      f.issued(f.login("john@example.com", "TopSecret0!"))
      f.store.failureCount("john@example.com") shouldBe None
      f.login("jane@example.com", "wrong")
      f.login("jane@example.com", "CorrectHorse9!") shouldBe Left(ApiError.tooManyFailedLogins(300))
    }

    "report an unusable hash to the log once per user" in {
      val f = new Fixture()
      f.login("broken@example.com", "x") shouldBe Left(ApiError.invalidGrant)
      f.unusable.report(broken, "again") shouldBe false // remembered by the login above
    }

    "answer 429 for a locked username, the right password too, without computing a hash" in {
      val f = new Fixture(maxFailures = 2)
      f.login("jane@example.com", "wrong-1") shouldBe Left(ApiError.invalidGrant)
      f.login("JANE@example.com", "wrong-2") shouldBe Left(ApiError.invalidGrant)
      val checks = f.passwordChecks
      f.login("jane@example.com", "CorrectHorse9!") match {
        case Left(error) =>
          error.status.intValue shouldBe 429
          error.error shouldBe "temporarily_unavailable"
          error.headers.map(h => h.name -> h.value) shouldBe List("Retry-After" -> "300")
        case Right(_) => fail("a locked username logged in")
      }
      f.passwordChecks shouldBe checks
      f.rejections("username_locked") shouldBe 1
      f.store.failureCount("jane@example.com") shouldBe Some(3) // the attempt beyond the limit was reserved, and stays
      f.addressCount shouldBe 2 // the address's reservation of the locked attempt given back
      f.issued(f.login("john@example.com", "TopSecret0!")) // another username is not locked
    }

    "unlock a username when its window has passed" in {
      val f = new Fixture(maxFailures = 1)
      f.login("john@example.com", "wrong")
      f.login("john@example.com", "TopSecret0!").isLeft shouldBe true
      val later = Instant.now().plusSeconds(301)
      f.store.clock = () => later
      f.issued(f.login("john@example.com", "TopSecret0!"))
    }

    "answer 429 for a locked address before the database is asked" in {
      val f = new Fixture(ipMaxFailures = 2)
      f.login("a@example.com", "x")
      f.login("b@example.com", "x")
      val calls = f.store.calls
      f.login("john@example.com", "TopSecret0!") shouldBe Left(ApiError.tooManyFailedLogins(300))
      f.store.calls shouldBe calls
      f.rejections("address_locked") shouldBe 1
      f.issued(f.login("john@example.com", "TopSecret0!", from = Some(InetAddress.getByName("192.0.2.8"))))
      f.issued(f.login("john@example.com", "TopSecret0!", from = None)) // no address known: not limited
    }

    "shed argon2id checks (stored, unknown-user dummy, unusable dummy) when no permit is free, never legacy HMAC ones" in {
      val f = new Fixture(permits = 0)
      for (username <- List("jane@example.com", "ghost@example.com", "broken@example.com"))
        withClue(username)(f.login(username, "whatever") shouldBe Left(ApiError.temporarilyUnavailable))
      f.rejections("overload") shouldBe 3
      f.passwordChecks shouldBe 0
      f.store.failureCount("jane@example.com") shouldBe Some(0) // shed: the reservation given back (G)
      f.store.releases.toSet shouldBe Set("jane@example.com", "ghost@example.com", "broken@example.com")
      f.issued(f.login("john@example.com", "TopSecret0!")) // a legacy match needs no permit
      f.login("john@example.com", "wrong") shouldBe Left(ApiError.temporarilyUnavailable) // its decoy does
      f.store.failureCount("john@example.com") shouldBe Some(0)
      f.rejections("overload") shouldBe 4
    }

    "count a shed check as a failure of its address, not of its username" in {
      val f = new Fixture(permits = 0, ipMaxFailures = 2)
      f.login("ghost@example.com", "x") shouldBe Left(ApiError.temporarilyUnavailable)
      f.login("jane@example.com", "x") shouldBe Left(ApiError.temporarilyUnavailable)
      val calls = f.store.calls
      f.login("john@example.com", "TopSecret0!") shouldBe Left(ApiError.tooManyFailedLogins(300))
      f.store.calls shouldBe calls // locked before the database is asked
      f.store.failureCount("jane@example.com") shouldBe Some(0)
      f.issued(f.login("john@example.com", "TopSecret0!", from = Some(InetAddress.getByName("192.0.2.8"))))
      f.login("ghost@example.com", "x", from = None) shouldBe Left(ApiError.temporarilyUnavailable) // nothing to lock
      f.rejections("overload") shouldBe 3
    }

    "give the permit back after an argon2id check, matched or not" in {
      val f = new Fixture(permits = 1)
      f.issued(f.login("jane@example.com", "CorrectHorse9!"))
      f.checks.available shouldBe 1
      f.login("ghost@example.com", "x") shouldBe Left(ApiError.invalidGrant)
      f.checks.available shouldBe 1
    }

    "fail with DatabaseUnavailable when the reservation or the session cannot be written, the address's reservation given back" in {
      val f = new Fixture()
      f.store.down = true
      a[DatabaseUnavailable] should be thrownBy f.login("john@example.com", "TopSecret0!")
      f.addressCount shouldBe 0
      f.store.down = false
      f.store.writesDown = true
      a[DatabaseUnavailable] should be thrownBy f.login("john@example.com", "TopSecret0!")
      f.addressCount shouldBe 0
      f.login("john@example.com", "wrong") shouldBe Left(ApiError.invalidGrant) // a failure writes nothing more
    }
  }

  "the refresh grant" should {
    "rotate: a new pair for the user as stored now, the same sid and client_id, a new refresh token" in {
      val f = new Fixture()
      val first = f.issued(f.login("john@example.com", "TopSecret0!", Some("cli")))
      val sid = claims(first.tokens.accessToken).getStringClaim("sid")
      f.store.putUser(john.copy(name = "John Q. Doe"))
      val second = f.issued(f.refresh(first.refreshToken))
      second.refreshToken should not be first.refreshToken
      RefreshToken.isWellFormed(second.refreshToken) shouldBe true
      claims(second.tokens.accessToken).getStringClaim("sid") shouldBe sid
      claims(second.tokens.accessToken).getStringClaim("client_id") shouldBe "cli"
      claims(second.tokens.idToken).getStringClaim("name") shouldBe "John Q. Doe"
      claims(second.tokens.idToken).getAudience.asScala shouldBe List("cli") // the family's client
      f.issued(f.refresh(second.refreshToken, Some("cli"))) // the successor works, with its client named too
    }

    "refuse a used token and revoke its family (reuse), counting refresh_reuse once" in {
      val f = new Fixture()
      val first = f.issued(f.login("john@example.com", "TopSecret0!"))
      val second = f.issued(f.refresh(first.refreshToken))
      f.refresh(first.refreshToken) shouldBe Left(ApiError.invalidRefreshToken)
      f.rejections("refresh_reuse") shouldBe 1
      f.refresh(second.refreshToken) shouldBe Left(ApiError.invalidRefreshToken) // the family is revoked
      f.refresh(first.refreshToken) shouldBe Left(ApiError.invalidRefreshToken)
      f.rejections("refresh_reuse") shouldBe 1 // nothing left to revoke
    }

    "refuse a malformed token without asking the database, an unknown one, another client's, an expired one" in {
      val f = new Fixture()
      val calls = f.store.calls
      for (bad <- List("short", "A" * 44, "A" * 42 + "=", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln"))
        f.refresh(bad) shouldBe Left(ApiError.invalidRefreshToken)
      f.store.calls shouldBe calls
      f.refresh("A" * 43) shouldBe Left(ApiError.invalidRefreshToken)
      val tokens = f.issued(f.login("john@example.com", "TopSecret0!", Some("cli")))
      f.refresh(tokens.refreshToken, Some("other")) shouldBe Left(ApiError.invalidRefreshToken)
      f.rejections("refresh_reuse") shouldBe 0
      f.store.clock = () => Instant.now().plusSeconds(86401)
      f.refresh(tokens.refreshToken) shouldBe Left(ApiError.invalidRefreshToken)
    }

    "refuse the refresh of every session of a user whose stored hash changed (disabled, reset)" in {
      for (changed <- List("$disabled$" + john.passwordHash, jane.passwordHash)) withClue(changed) {
        val f = new Fixture()
        val one = f.issued(f.login("john@example.com", "TopSecret0!"))
        val two = f.issued(f.login("john@example.com", "TopSecret0!", Some("cli")))
        f.store.putUser(john.copy(passwordHash = changed))
        f.refresh(one.refreshToken) shouldBe Left(ApiError.invalidRefreshToken)
        f.refresh(two.refreshToken) shouldBe Left(ApiError.invalidRefreshToken)
        f.store.rows.forall(_.usedAt.isEmpty) shouldBe true // nothing rotated
        f.rejections("refresh_reuse") shouldBe 0
      }
    }

    "end a session at its maximum lifetime, rotation never extending it" in {
      val f = new Fixture(maxLifetimeSeconds = 1000)
      val start = Instant.now()
      f.store.clock = () => start
      val first = f.issued(f.login("john@example.com", "TopSecret0!"))
      f.store.row(first.refreshToken).map(_.expiresAt) shouldBe Some(start.plusSeconds(1000)) // not the 86400 s TTL
      f.store.clock = () => start.plusSeconds(900)
      val second = f.issued(f.refresh(first.refreshToken))
      f.store.row(second.refreshToken).map(_.expiresAt) shouldBe Some(start.plusSeconds(1000))
      f.store.clock = () => start.plusSeconds(1000)
      f.refresh(second.refreshToken) shouldBe Left(ApiError.invalidRefreshToken)
    }

    "fail with DatabaseUnavailable when the database is down" in {
      val f = new Fixture()
      f.store.down = true
      a[DatabaseUnavailable] should be thrownBy f.refresh("A" * 43)
    }
  }

  "revoke" should {
    "revoke the family of a well-formed token and ask nothing for any other value" in {
      val f = new Fixture()
      val first = f.issued(f.login("john@example.com", "TopSecret0!"))
      val second = f.issued(f.refresh(first.refreshToken))
      f.await(f.service.revoke(first.refreshToken)) // a used token ends the session too
      f.refresh(second.refreshToken) shouldBe Left(ApiError.invalidRefreshToken)
      val calls = f.store.calls
      f.await(f.service.revoke(second.tokens.accessToken))
      f.await(f.service.revoke("x"))
      f.store.calls shouldBe calls
      f.await(f.service.revoke("B" * 43)) // unknown: nothing to revoke, no error
    }
  }
}
