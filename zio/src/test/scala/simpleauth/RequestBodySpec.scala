package simpleauth

import java.nio.charset.StandardCharsets.UTF_8

import zio.*
import zio.http.*
import zio.stream.ZStream
import zio.test.*

object RequestBodySpec extends ZIOSpecDefault:
  /** A POST whose body arrives as a stream, announced with Content-Length or sent chunked. */
  private def post(bytes: Int, chunked: Boolean = false): Request =
    val body = Body.fromStreamChunked(ZStream.fromChunk(Chunk.fill(bytes)('x'.toByte)).rechunk(1000))
    val header =
      if chunked then Header.TransferEncoding.Chunked
      else Header.ContentLength(bytes.toLong)
    Request.post(URL(Path.root / "token"), body).addHeader(header)

  def spec = suite("RequestBody")(
    test("reads up to 8192 bytes, announced or chunked") {
      for
        announced <- RequestBody.read(post(8192))
        chunked   <- RequestBody.read(post(8192, chunked = true))
      yield assertTrue(announced.length == 8192, chunked.length == 8192)
    },
    test("more is 413; the body is drained first, so the connection can be kept") {
      for
        announced <- RequestBody.read(post(8193)).flip
        chunked   <- RequestBody.read(post(9000, chunked = true)).flip
      yield assertTrue(announced == ApiError.PayloadTooLarge(true), chunked == ApiError.PayloadTooLarge(true))
    },
    test("past the drain cap the body is left unread and the answer closes the connection") {
      for
        announced <- RequestBody.read(post(RequestBody.DrainCap.toInt + 1)).flip
        drained   <- RequestBody.drain(post(RequestBody.DrainCap.toInt + 1, chunked = true))
      yield assertTrue(
        announced == ApiError.PayloadTooLarge(false),
        !drained,
        RequestBody.closeUnless(drained)(Response.ok).rawHeader("connection").contains("close"),
        RequestBody.closeUnless(true)(Response.ok).rawHeader("connection").isEmpty
      )
    },
    test("a request without a body drains at once; one with a body is read to its end") {
      for
        none <- RequestBody.drain(Request.get(URL(Path.root / "health")))
        some <- RequestBody.drain(post(5000))
      yield assertTrue(none, some, !RequestBody.hasBody(Request.get(URL(Path.root))), RequestBody.hasBody(post(1)))
    }
  ) @@ TestAspect.withLiveClock
