package simpleauth

import com.nimbusds.jwt.SignedJWT
import java.sql.SQLTransientConnectionException
import java.util.UUID
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec
import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration.*

class TokenServiceSpec extends AnyWordSpec with Matchers {
  private val john = User(UUID.randomUUID(), "johndoe", "John Doe", "john@example.com",
    "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE=")
  private val broken = User(UUID.randomUUID(), "broken", "Broken Hash", "broken@example.com", "$bcrypt$2b$10$xyz")

  private object Users extends UserRepository {
    @volatile var down = false
    override def findByEmail(email: String): Future[Option[User]] =
      if (down) Future.failed(new DatabaseUnavailable(new SQLTransientConnectionException("pool timeout")))
      else Future.successful(List(john, broken).find(_.email == email))
    override def ping(): Future[Unit] = Future.unit
  }

  private val metrics = Vectors.metrics()
  private val passwords = new PasswordVerifier(metrics)
  private val unusable = new UnusableHashLog(log = new LogCapture("token-service").logger)
  private val service = new TokenService(Users, passwords, TestRoutes.keys(metrics), unusable, ExecutionContext.global, "default-client")

  private def login(username: String, password: String): Option[TokenPair] =
    Await.result(service.login(TokenRequest(username, password)), 10.seconds)

  "TokenService.login" should {
    "issue a token pair for the user when the password matches" in {
      val pair = login("john@example.com", "TopSecret0!").getOrElse(fail("no token pair"))
      pair.expiresIn shouldBe 600
      val id = SignedJWT.parse(pair.idToken)
      Vectors.verifies(pair.idToken, Vectors.devKey) shouldBe true
      id.getJWTClaimsSet.getSubject shouldBe john.id.toString
      SignedJWT.parse(pair.accessToken).getJWTClaimsSet.getStringClaim("client_id") shouldBe "default-client"
    }

    "put the request's client_id in the access token" in {
      val pair = Await.result(service.login(TokenRequest("john@example.com", "TopSecret0!", Some("cli"))), 10.seconds).get
      SignedJWT.parse(pair.accessToken).getJWTClaimsSet.getStringClaim("client_id") shouldBe "cli"
    }

    "refuse a wrong password, an unknown user and an unusable hash alike, each after argon2id-sized work" in {
      val before = passwords.equalisationCount
      login("john@example.com", "wrong") shouldBe None
      passwords.equalisationCount shouldBe before // a real check, no dummy work on top
      login("nobody@example.com", "TopSecret0!") shouldBe None
      passwords.equalisationCount shouldBe before + 1
      login("broken@example.com", "TopSecret0!") shouldBe None
      passwords.equalisationCount shouldBe before + 2
    }

    "report an unusable hash to the log once per user" in {
      login("broken@example.com", "x") shouldBe None
      unusable.report(broken, "again") shouldBe false // remembered by the login above (or an earlier one)
    }

    "fail with DatabaseUnavailable when the user store is down" in {
      Users.down = true
      try {
        val failure = service.login(TokenRequest("john@example.com", "TopSecret0!")).failed
        Await.result(failure, 10.seconds) shouldBe a[DatabaseUnavailable]
      } finally Users.down = false
    }
  }
}
