package simpleauth

import zio.*
import zio.http.{Header, Request, Response}
import zio.json.*
import zio.json.ast.Json

/**
 * Reading request bodies with the contract's 8 KiB limit, and discarding what a request sent but the answer does
 * not need (an oversized body, a wrong method's body), so the client sees the answer and the connection can serve
 * its next request. Request streaming is on, so Netty never aggregates or rejects a body itself.
 */
object RequestBody:
  /** A `POST /token` body of `kind`, read by the core's `TokenRequest` (JSON parsed here, by zio-json). */
  def tokenRequest(kind: TokenRequest.BodyKind, body: Array[Byte]): Either[RequestError, TokenRequest] =
    kind match
      case TokenRequest.BodyKind.Json => jsonMembers(body).flatMap(TokenRequest.fromJson)
      case TokenRequest.BodyKind.Form => TokenRequest.fromForm(body)

  /** A `POST /revoke` body of `kind`. */
  def revokeRequest(kind: TokenRequest.BodyKind, body: Array[Byte]): Either[RequestError, RevokeRequest] =
    kind match
      case TokenRequest.BodyKind.Json => jsonMembers(body).flatMap(TokenRequest.revokeFromJson)
      case TokenRequest.BodyKind.Form => TokenRequest.revokeFromForm(body)

  /** The members of a JSON object body, in order and repeats kept (zio-json's AST keeps both). */
  def jsonMembers(body: Array[Byte]): Either[RequestError, Seq[(String, JsonMember)]] =
    TokenRequest.utf8(body).flatMap { text =>
      text.fromJson[Json] match
        case Left(_) => Left(TokenRequest.NotJson)
        case Right(obj: Json.Obj) =>
          Right(obj.fields.map {
            case (name, Json.Str(value)) => name -> JsonMember.Str(value)
            case (name, _)               => name -> JsonMember.Other
          })
        case Right(_) => Left(TokenRequest.NotAnObject)
    }

  /** Beyond this much body we stop reading and close the connection instead. */
  val DrainCap: Long = 1L << 20
  val DrainTimeout: Duration = 2.seconds

  def announcedLength(req: Request): Option[Long] =
    req.rawHeader("content-length").flatMap(_.trim.toLongOption)

  def hasBody(req: Request): Boolean =
    announcedLength(req).exists(_ > 0) || req.rawHeader("transfer-encoding").isDefined

  /**
   * Reads the body, failing with 413 once it exceeds `max` bytes (announced or chunked). An oversized body is still
   * drained up to `DrainCap` so the answer reaches the client and the connection stays usable. A chunked body is
   * streamed and counted as it comes; one with an announced length within `max` is read whole.
   */
  def read(req: Request, max: Int = TokenRequest.MaxBodyBytes): IO[ApiError, Array[Byte]] =
    announcedLength(req) match
      case Some(n) if n > max => drain(req).flatMap(d => ZIO.fail(ApiError.PayloadTooLarge(d)))
      case Some(_) if req.rawHeader("transfer-encoding").isEmpty =>
        // Netty's decoder hands over exactly the announced bytes, at most `max`: read whole, by one callback when the
        // last of them has come, without the queue, stream and scope of `asStream`.
        req.body.asArray.mapError(_ => Unreadable)
      case _ =>
        req.body.asStream.chunks
          .runFoldWhile((Chunk.empty[Byte], 0L))(_._2 <= DrainCap) { case ((acc, n), c) =>
            val total = n + c.length
            (if total <= max then acc ++ c else Chunk.empty, total)
          }
          .mapError(_ => Unreadable)
          .flatMap { case (acc, n) =>
            if n > max then ZIO.fail(ApiError.PayloadTooLarge(n <= DrainCap)) else ZIO.succeed(acc.toArray)
          }

  private val Unreadable = ApiError.InvalidRequest("could not read the request body")

  /**
   * Discards whatever body remains (up to `DrainCap`, for at most `DrainTimeout`) so the connection can be reused;
   * false if we gave up, and the answer must then close the connection: a body that never completes must not hold
   * the answer back.
   */
  def drain(req: Request): UIO[Boolean] =
    if !hasBody(req) then ZIO.succeed(true)
    else if announcedLength(req).exists(_ > DrainCap) then ZIO.succeed(false)
    else
      req.body.asStream.chunks
        .runFoldWhile(0L)(_ <= DrainCap)((n, c) => n + c.length)
        .map(_ <= DrainCap)
        .timeout(DrainTimeout)
        .map(_.getOrElse(false))
        .catchAll(_ => ZIO.succeed(false))

  /** The answer, with `Connection: close` if the body could not be drained. */
  def closeUnless(drained: Boolean)(response: Response): Response =
    if drained then response else response.addHeader(Header.Connection.Close)
