package simpleauth

import akka.http.scaladsl.model.{ContentTypes, HttpEntity, HttpResponse}
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class ApiErrorSpec extends AnyWordSpec with Matchers {
  private def body(response: HttpResponse) = response.entity.asInstanceOf[HttpEntity.Strict].data.utf8String
  private def headers(response: HttpResponse) = response.headers.map(h => h.name -> h.value).toMap

  "The answers of sessions and limits" should {
    "be 429 with Retry-After (at least 1), no-store and the one body of both login limits" in {
      for ((seconds, expected) <- List(300L -> "300", 1L -> "1", 0L -> "1", -5L -> "1")) {
        val response = ApiError.tooManyFailedLogins(seconds).response
        response.status.intValue shouldBe 429
        response.entity.contentType shouldBe ContentTypes.`application/json`
        headers(response) shouldBe Map("Cache-Control" -> "no-store", "Retry-After" -> expected)
        body(response) shouldBe
          """{"error":"temporarily_unavailable","error_description":"too many failed logins; try again later"}"""
        response.attribute(ApiError.Code) shouldBe Some("temporarily_unavailable")
      }
    }

    "shed a check with the database's 503: Retry-After: 1" in {
      val response = ApiError.temporarilyUnavailable.response
      response.status.intValue shouldBe 503
      headers(response) shouldBe Map("Cache-Control" -> "no-store", "Retry-After" -> "1")
      body(response) should startWith("""{"error":"temporarily_unavailable",""")
    }

    "refuse every refresh with exactly the contract's bytes, apart from a refused login's" in {
      val response = ApiError.invalidRefreshToken.response
      response.status.intValue shouldBe 400
      headers(response) shouldBe Map("Cache-Control" -> "no-store")
      body(response) shouldBe """{"error":"invalid_grant","error_description":"invalid refresh token"}"""
      body(ApiError.invalidGrant.response) shouldBe """{"error":"invalid_grant","error_description":"invalid username or password"}"""
    }
  }
}
