package simpleauth

import java.nio.file.Files

import zio.test.*

/** The statements of contract §7 are the same text in every stack: this one's are the README's (JDBC gets `$n` as `?`). */
object SqlSpec extends ZIOSpecDefault:
  /** The SQL block of §7, statement by statement (separated by blank lines), comment lines left out. */
  private lazy val contractStatements: List[String] =
    val readme  = Files.readString(Vectors.specDir.resolve("README.md"))
    val section = readme.substring(readme.indexOf("## 7."))
    val open    = section.indexOf("```sql") + 6
    section.substring(open, section.indexOf("```", open)).split("\n\\s*\n").toList
      .map(_.linesIterator.filterNot(_.trim.startsWith("--")).mkString("\n").trim)
      .filter(_.nonEmpty)

  def spec = suite("§7")(
    test("the statements are the contract's, verbatim") {
      val ours = List(UserRepository.Reserve, UserRepository.Release, SessionRepository.Start, SessionRepository.Rotate,
        SessionRepository.RevokeUsed, SessionRepository.Revoke).map(_.text)
      assertTrue(contractStatements.sorted == ours.sorted)
    }
  )
