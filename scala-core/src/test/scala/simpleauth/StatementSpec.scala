package simpleauth

import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

class StatementSpec extends AnyWordSpec with Matchers {
  "Statement" should {
    "write each $n as ? and bind in text order, repeating a value where its $n repeats" in {
      val s = new Statement("SELECT $2::integer, lower($1), $2::integer + $10, $3")
      s.jdbc shouldBe "SELECT ?::integer, lower(?), ?::integer + ?, ?"
      s.order shouldBe Vector(2, 1, 2, 10, 3)
      s.toString shouldBe "SELECT $2::integer, lower($1), $2::integer + $10, $3"
    }
  }
}
