package simpleauth

import java.util.UUID

import com.nimbusds.jose.{JWSHeader, JWSObject, Payload}
import zio.*
import zio.json.ast.Json

/**
 * Everything one signing key decides, as one immutable value: the signer, the JWKS (the signing key first, then the
 * bundle's keys in file order, a `kid` already present left out; §3) and the discovery document, rendered once. A
 * reload swaps the whole value, so a request sees the old keys or the new, never a mix.
 */
final case class KeySet(signing: SigningKey, published: List[PublicJwk], jwks: String, discovery: String)

object KeySet:
  def apply(signing: SigningKey, bundle: List[PublicJwk], issuer: String): KeySet =
    val published = bundle.foldLeft(List(signing.jwk)) { (keys, k) => if keys.exists(_.kid == k.kid) then keys else keys :+ k }
    KeySet(signing, published, Json.Obj("keys" -> Json.Arr(Chunk.fromIterable(published.map(_.json)))).toString, discovery(issuer, signing.alg))

  /** The signing key and the bundle, parsed with the start-up rules (§5). */
  def load(privateKeyPem: String, publicKeysPem: Option[String], issuer: String): Either[String, KeySet] =
    for
      signing <- SigningKeys.loadSigningKey(privateKeyPem)
      bundle  <- publicKeysPem.fold(Right(Nil))(SigningKeys.loadPublicKeys)
    yield KeySet(signing, bundle, issuer)

  val ClaimsSupported: List[String] =
    List("iss", "aud", "sub", "iat", "exp", "sid", "jti", "client_id", "name", "preferred_username", "email", "at_hash")

  /** OpenID Connect Discovery 1.0 §3 (RFC 8414), exactly the contract's members (§3); URLs join without doubling `/`. */
  def discovery(issuer: String, alg: String): String =
    val base = issuer.stripSuffix("/")
    def strings(values: String*) = Json.Arr(Chunk.fromIterable(values.map(Json.Str(_))))
    Json.Obj(
      "issuer"                                -> Json.Str(issuer),
      "token_endpoint"                        -> Json.Str(base + "/token"),
      "jwks_uri"                              -> Json.Str(base + "/.well-known/jwks.json"),
      "grant_types_supported"                 -> strings("password", "refresh_token"),
      "revocation_endpoint"                   -> Json.Str(base + "/revoke"),
      "revocation_endpoint_auth_methods_supported" -> strings("none"),
      "response_types_supported"              -> strings(),
      "subject_types_supported"               -> strings("public"),
      "id_token_signing_alg_values_supported" -> strings(alg),
      "token_endpoint_auth_methods_supported" -> strings("none"),
      "claims_supported"                      -> strings(ClaimsSupported*)
    ).toString

/** Signs the access/ID token pair and publishes the keys (contract §2, §3); its keys can be swapped by a reload (§5). */
trait TokenSigner:
  /** The keys in service now: one snapshot, used whole. */
  def keys: UIO[KeySet]
  /**
   * A token pair about `user` in the session `sid` (the refresh-token family, §2, §7); the access token's
   * `client_id` is `clientId`, else `DEFAULT_CLIENT_ID`.
   */
  def issue(user: User, clientId: Option[String], sid: UUID): UIO[TokenPair]
  /**
   * Reads the key files again and swaps the keys if they pass the start-up rules (one info line, counted `success`);
   * otherwise the keys in service stay, one error line names the problem (counted `failure`). True if swapped.
   */
  def reload: UIO[Boolean]

object TokenSigner:
  def reload: URIO[TokenSigner, Boolean] = ZIO.serviceWithZIO[TokenSigner](_.reload)

  val live: ZLayer[Settings, SettingsError, TokenSigner] = ZLayer {
    for
      cfg    <- ZIO.service[Settings]
      keys   <- ZIO.fromEither(KeySet.load(cfg.privateKeyPem.stringValue, cfg.publicKeysPem, cfg.issuer)).mapError(SettingsError(_))
      signer <- make(keys, cfg)
    yield signer
  }

  def make(keys: KeySet, cfg: Settings): UIO[Live] =
    Ref.make(keys).map(Live(_, cfg.issuer, cfg.audience, cfg.tokenTtlSeconds, cfg.defaultClientId, cfg.keySource))

  final case class Live(current: Ref[KeySet], issuer: String, audience: String, ttlSeconds: Long, defaultClientId: String, source: KeySource)
      extends TokenSigner:
    val keys: UIO[KeySet] = current.get

    private def sign(header: JWSHeader, key: SigningKey, claims: Json.Obj): String =
      val jws = new JWSObject(header, new Payload(claims.toString))
      jws.sign(key.signer)
      jws.serialize()

    def issue(user: User, clientId: Option[String], sid: UUID): UIO[TokenPair] =
      current.get.zip(Clock.instant).flatMap { (keySet, now) =>
        ZIO.succeed {
          val key = keySet.signing
          val iat = now.getEpochSecond
          val exp = iat + ttlSeconds
          val session = sid.toString
          def common(jti: String) = Chunk(
            "iss" -> Json.Str(issuer),
            "aud" -> Json.Str(audience),
            "sub" -> Json.Str(user.id.toString),
            "iat" -> Json.Num(iat),
            "exp" -> Json.Num(exp),
            "sid" -> Json.Str(session),
            "jti" -> Json.Str(jti)
          )
          val access = sign(
            key.accessTokenHeader,
            key,
            Json.Obj(common(UUID.randomUUID().toString) :+ ("client_id" -> Json.Str(clientId.getOrElse(defaultClientId))))
          )
          val id = sign(
            key.idTokenHeader,
            key,
            Json.Obj(
              common(UUID.randomUUID().toString) ++ Chunk(
                "name"               -> Json.Str(user.name),
                "preferred_username" -> Json.Str(user.username),
                "email"              -> Json.Str(user.email),
                "at_hash"            -> Json.Str(key.atHash(access))
              )
            )
          )
          TokenPair(access, id, ttlSeconds)
        } @@ Metrics.tokenSigningDuration
      }

    /** The files are read on the blocking pool; the swap is one `Ref.set`. */
    val reload: UIO[Boolean] =
      ZIO
        .attemptBlocking(
          for
            key    <- source.readPrivateKey
            bundle <- source.readPublicKeys
            keys   <- KeySet.load(key.stringValue, bundle, issuer)
          yield keys
        )
        .catchAll(e => ZIO.succeed(Left(s"unexpected ${e.getClass.getSimpleName}")))
        .flatMap {
          case Right(keys) =>
            current.set(keys) *> Metrics.keysReloaded(success = true) *>
              ZIO.logInfo(s"keys reloaded: kid=${keys.signing.kid} alg=${keys.signing.alg} published=${keys.published.size} " +
                s"signer=${keys.signing.provider}").as(true)
          case Left(problem) =>
            current.get.flatMap { old =>
              Metrics.keysReloaded(success = false) *>
                ZIO.logError(s"key reload failed, keeping kid=${old.signing.kid} alg=${old.signing.alg}: $problem").as(false)
            }
        }
