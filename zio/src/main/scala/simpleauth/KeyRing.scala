package simpleauth

import java.util.UUID

import com.nimbusds.jose.jwk.{ECKey, JWK, OctetKeyPair, RSAKey}
import zio.*
import zio.json.ast.Json

/**
 * Everything one load of the keys decides, as one immutable value: the core's signer, the JWKS (the signing key
 * first, then the bundle's keys in file order, a `kid` already present left out; §3) and the discovery document,
 * both rendered once. A reload swaps the whole value, so a request sees the old keys or the new, never a mix.
 */
final case class KeySet(signer: TokenSigner, signing: SigningKey, published: List[JWK], jwks: String, discovery: String)

object KeySet:
  def from(keys: KeyMaterial, issuer: String, audience: String, ttlSeconds: Long): KeySet =
    val published = (keys.signing.publicJwk :: keys.published).distinctBy(_.getKeyID)
    KeySet(
      new TokenSigner(keys.signing, issuer, audience, ttlSeconds),
      keys.signing,
      published,
      Json.Obj("keys" -> Json.Arr(Chunk.fromIterable(published.map(jwk)))).toString,
      discovery(issuer, keys.signing.algorithm.name)
    )

  /** [[from]], with a signer that cannot be made (not expected after the key checks) as a refusal. */
  def build(keys: KeyMaterial, cfg: Settings): Either[SettingsError, KeySet] =
    try Right(from(keys, cfg.issuer, cfg.audience, cfg.tokenTtlSeconds))
    catch case e: Exception => Left(SettingsError(s"cannot sign with the ${keys.signing.algorithm.name} key (${e.getClass.getSimpleName})"))

  /** A public JWK as §3 writes it, members in spec/vectors.json's order: kty, use, alg, kid, then the key's own. */
  def jwk(key: JWK): Json.Obj =
    def base(kind: String) = Chunk(
      "kty" -> Json.Str(kind),
      "use" -> Json.Str("sig"),
      "alg" -> Json.Str(key.getAlgorithm.getName),
      "kid" -> Json.Str(key.getKeyID)
    )
    key match
      case k: RSAKey => Json.Obj(base("RSA") ++ Chunk("e" -> Json.Str(k.getPublicExponent.toString), "n" -> Json.Str(k.getModulus.toString)))
      case k: ECKey =>
        Json.Obj(base("EC") ++ Chunk("crv" -> Json.Str(k.getCurve.getName), "x" -> Json.Str(k.getX.toString), "y" -> Json.Str(k.getY.toString)))
      case k: OctetKeyPair => Json.Obj(base("OKP") ++ Chunk("crv" -> Json.Str(k.getCurve.getName), "x" -> Json.Str(k.getX.toString)))
      case other           => throw new IllegalArgumentException(s"not a signing JWK: ${other.getKeyType}")

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

/**
 * The key set in service (contract §2, §3), and its reload on SIGHUP (§5, *Key rotation*): the core's signer signs
 * the access/ID token pair with the key set of the moment.
 */
trait KeyRing:
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

object KeyRing:
  def reload: URIO[KeyRing, Boolean] = ZIO.serviceWithZIO[KeyRing](_.reload)

  /** The keys the settings loaded at start. */
  val live: ZLayer[Settings, SettingsError, KeyRing] = ZLayer {
    for
      cfg  <- ZIO.service[Settings]
      keys <- ZIO.fromEither(KeySet.build(cfg.keys, cfg))
      ring <- make(keys, cfg)
    yield ring
  }

  def make(keys: KeySet, cfg: Settings): UIO[Live] =
    Ref.make(keys).map(Live(_, cfg))

  final case class Live(current: Ref[KeySet], cfg: Settings) extends KeyRing:
    val keys: UIO[KeySet] = current.get

    /** Signed at ZIO's clock (tests move it), on the calling fiber's thread. */
    def issue(user: User, clientId: Option[String], sid: UUID): UIO[TokenPair] =
      current.get.zip(Clock.instant).flatMap { (keySet, now) =>
        ZIO.succeed(keySet.signer.issueAt(user, clientId.getOrElse(cfg.defaultClientId), sid, now)) @@ Metrics.tokenSigningDuration
      }

    /** The files are read on the blocking pool; the swap is one `Ref.set`. */
    val reload: UIO[Boolean] =
      ZIO
        .attemptBlocking(cfg.keySources.load().flatMap(KeySet.build(_, cfg)))
        .catchAll(e => ZIO.succeed(Left(SettingsError(s"unexpected ${e.getClass.getSimpleName}"))))
        .flatMap {
          case Right(keys) =>
            current.set(keys) *> Metrics.keysReloaded(success = true) *>
              ZIO.logInfo(s"keys reloaded: kid=${keys.signing.kid} alg=${keys.signing.algorithm.name} published=${keys.published.size} " +
                s"signer=${keys.signer.provider}").as(true)
          case Left(problem) =>
            current.get.flatMap { old =>
              Metrics.keysReloaded(success = false) *>
                ZIO.logError(s"key reload failed, keeping kid=${old.signing.kid} alg=${old.signing.algorithm.name}: ${problem.message}").as(false)
            }
        }
