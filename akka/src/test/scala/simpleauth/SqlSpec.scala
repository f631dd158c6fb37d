package simpleauth

import java.nio.charset.StandardCharsets
import java.nio.file.Files
import org.scalatest.matchers.should.Matchers
import org.scalatest.wordspec.AnyWordSpec

/** The statements of contract §7 are the same text in every stack: this one's are the README's (JDBC gets `$n` as `?`). */
class SqlSpec extends AnyWordSpec with Matchers {
  /** The SQL block of §7, statement by statement (separated by blank lines), comment lines left out. */
  private lazy val contractStatements: List[String] = {
    val readme = new String(Files.readAllBytes(Vectors.specDir.resolve("README.md")), StandardCharsets.UTF_8)
    val section = readme.substring(readme.indexOf("## 7."))
    val block = section.substring(section.indexOf("```sql") + 6, section.indexOf("```", section.indexOf("```sql") + 6))
    block.split("\n\\s*\n").toList
      .map(_.linesIterator.filterNot(_.trim.startsWith("--")).mkString("\n").trim)
      .filter(_.nonEmpty)
  }

  "The statements" should {
    "be the contract's, verbatim" in {
      contractStatements should contain theSameElementsAs List(
        JdbcUserRepository.ReserveSql,
        JdbcUserRepository.ReleaseSql,
        JdbcSessionRepository.StartSql,
        JdbcSessionRepository.RotateSql,
        JdbcSessionRepository.RevokeUsedSql,
        JdbcSessionRepository.RevokeFamilySql
      ).map(_.text)
    }
  }
}
