package simpleauth

import zio.*
import zio.http.*
import zio.test.*

object DrainingSpec extends ZIOSpecDefault:
  private val ok = Response.text("ok")

  def spec = suite("Draining")(
    test("before shutdown answers are left alone") {
      val draining = Draining()
      assertTrue(!draining.isStarted, draining(ok).rawHeader("connection").isEmpty)
    },
    test("once started, every answer closes its connection; one that already says what happens keeps that") {
      val draining = Draining()
      for _ <- draining.start
      yield assertTrue(
        draining.isStarted,
        draining(ok).rawHeader("connection").contains("close"),
        draining(ok.addHeader(Header.Connection.KeepAlive)).rawHeader("connection").contains("keep-alive")
      )
    },
    test("once started, a body is streamed with its length, so zio-http counts the request done only once written") {
      val draining = Draining()
      for
        _     <- draining.start
        after  = draining(ok)
        bytes <- after.body.asArray
      yield assertTrue(
        ok.body.isComplete,
        !after.body.isComplete,
        after.body.knownContentLength.contains(2L),
        new String(bytes, "UTF-8") == "ok",
        draining(Response.status(Status.NoContent)).body.isComplete
      )
    },
    test("through the routes: GET and HEAD answers carry Connection: close once started") {
      val draining = Draining()
      val api      = Api(draining)
      val live     = URL(Path.root / "health" / "live")
      def ask(request: Request) = ZIO.scoped(api.routes.runZIO(request))
      for
        before <- ask(Request.get(live))
        _      <- draining.start
        after  <- ZIO.foreach(List(Request.get(live), Request.head(live), Request.get(URL(Path.root / "health"))))(ask)
      yield assertTrue(
        before.rawHeader("connection").isEmpty,
        after.forall(_.rawHeader("connection").contains("close"))
      )
    }.provide(RoutesSpec.signerLayer, PasswordVerifierSpec.users, PasswordVerifier.live, ZLayer.succeed(new UnusableHashLog()), InMemoryDatabase.jdbc, TokenService.live,
      ZLayer.succeed(RoutesSpec.testConfig), AddressLimiterLayer.live)
  )
