package simpleauth

import java.sql.{Connection, PreparedStatement, Types}
import java.util.UUID
import scala.util.control.NonFatal

/**
 * One SQL statement of contract §7, kept as the contract writes it (`$n`), and what JDBC takes: `?` in text order,
 * the parameters bound in that order, a value repeated where its `$n` repeats.
 */
final class Statement(val text: String) {
  /** The statement with every `$n` written `?`. */
  val jdbc: String = Statement.Placeholder.replaceAllIn(text, "?")

  /** The `n` of each `?`, in text order. */
  val order: Vector[Int] = Statement.Placeholder.findAllMatchIn(text).map(_.group(1).toInt).toVector

  /**
   * The statement prepared on `conn` with `params(n - 1)` as `$n`: a String, Int, byte array, UUID, or an Option of
   * one (None is a text NULL). The caller closes it.
   */
  def prepare(conn: Connection, params: Any*): PreparedStatement = {
    require(order.forall(n => n >= 1 && n <= params.length), s"$$n out of the ${params.length} parameters given")
    val ps = conn.prepareStatement(jdbc)
    try {
      for ((n, i) <- order.zipWithIndex) Statement.bind(ps, i + 1, params(n - 1))
      ps
    } catch {
      case NonFatal(e) =>
        ps.close()
        throw e
    }
  }

  override def toString: String = text
}

object Statement {
  private val Placeholder = """\$(\d+)""".r

  private def bind(ps: PreparedStatement, index: Int, value: Any): Unit = value match {
    case s: String      => ps.setString(index, s)
    case i: Int         => ps.setInt(index, i)
    case b: Array[Byte] => ps.setBytes(index, b)
    case u: UUID        => ps.setObject(index, u)
    case Some(v)        => bind(ps, index, v)
    case None           => ps.setNull(index, Types.VARCHAR)
    case other          => throw new IllegalArgumentException(s"no JDBC binding for ${other.getClass.getName}")
  }
}
