package simpleauth

import com.typesafe.config.ConfigFactory
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

import scala.util.Try

class LicenceSpec extends AnyWordSpec with Matchers {
  "The Akka on the classpath" should {
    "not stop the service 15 minutes after start" in {
      // Akka releases since October 2024 (2.8.8 among them) check a licence key at start and, without one,
      // terminate the actor system (and so the service) 15 minutes later: long enough to pass every test, short
      // enough to break every benchmark and deployment. Bumping Akka past 2.8.5 needs a key in AKKA_LICENSE_KEY
      // (README, "Versions").
      val checksLicence = Try(Class.forName("akka.actor.dungeon.LicenseKeySupplier")).isSuccess
      val config = ConfigFactory.load()
      val keyConfigured = config.hasPath("akka.license-key") && config.getString("akka.license-key").nonEmpty
      withClue(s"akka ${akka.Version.current} checks for a licence key and none is configured: ") {
        (!checksLicence || keyConfigured) shouldBe true
      }
    }
  }
}
