package simpleauth

import java.time.Instant
import java.util.concurrent.atomic.AtomicReference
import org.slf4j.{Logger, LoggerFactory}
import scala.util.control.NonFatal

/**
 * Everything the signing key decides, as one immutable value: the signer, the JWKS (the signing key first,
 * then the published keys, each `kid` once) and the discovery document. A request reads one `KeySet` and
 * uses only it, so it is signed and answered wholly with the old keys or wholly with the new.
 */
final case class KeySet(signer: TokenSigner, jwks: JwkSet, discovery: OpenIdConfiguration) {
  def kid: String = signer.kid
  def algorithm: KeyAlgorithm = signer.algorithm
}

object KeySet {
  /** The token settings that stay the same across reloads. */
  final case class TokenSettings(issuer: String, audience: String, ttlSeconds: Long)

  object TokenSettings {
    def from(settings: Settings): TokenSettings = TokenSettings(settings.issuer, settings.audience, settings.tokenTtlSeconds)
  }

  /** [[from]], with a signer that cannot be made (not expected after the key checks) as a refusal. */
  def build(keys: KeyMaterial, tokens: TokenSettings, metrics: Metrics): Either[SettingsError, KeySet] =
    try Right(from(keys, tokens, metrics))
    catch { case NonFatal(e) => Left(SettingsError(s"cannot sign with the ${keys.signing.algorithm.name} key (${e.getClass.getSimpleName})")) }

  def from(keys: KeyMaterial, tokens: TokenSettings, metrics: Metrics, clock: () => Instant = () => Instant.now()): KeySet = {
    val signer = new TokenSigner(keys.signing, tokens.issuer, tokens.audience, tokens.ttlSeconds, metrics.tokenPairSigned, clock)
    val published = (keys.signing.publicJwk :: keys.published).distinctBy(_.getKeyID)
    KeySet(signer, JwkSet.from(published), OpenIdConfiguration.from(tokens.issuer, keys.signing.algorithm))
  }
}

/**
 * The key set in service, and its reload on SIGHUP (contract §5, *Key rotation*): `load` reads the key
 * files again with the start-up rules; a good result replaces the key set in one atomic step, a bad one
 * leaves the old keys in service. Either way one log line and one `simpleauth_key_reloads_total` count.
 * Reloads run one at a time (a second SIGHUP waits for the first).
 */
final class KeyRing(
    initial: KeySet,
    load: () => Either[SettingsError, KeySet],
    metrics: Metrics,
    log: Logger = LoggerFactory.getLogger(classOf[KeyRing])
) {
  private val ref = new AtomicReference[KeySet](initial)

  /** The key set a request uses, read once per request. */
  def current: KeySet = ref.get()

  def reload(): Either[SettingsError, KeySet] = synchronized {
    val loaded =
      try load()
      catch { case NonFatal(e) => Left(SettingsError(s"unexpected ${e.getClass.getSimpleName}")) }
    loaded match {
      case Right(keys) =>
        ref.set(keys)
        metrics.keyReload(success = true)
        log.info(s"keys reloaded: kid ${keys.kid}, alg=${keys.algorithm.name}, ${keys.jwks.keys.size} published keys")
        Right(keys)
      case Left(error) =>
        metrics.keyReload(success = false)
        log.error(s"key reload failed, keeping kid ${current.kid} (alg=${current.algorithm.name}): ${error.message}")
        Left(error)
    }
  }
}

object KeyRing {
  /** A key ring that never changes (tests, and a reload that cannot fail). */
  def fixed(keys: KeySet, metrics: Metrics): KeyRing = new KeyRing(keys, () => Right(keys), metrics)
}
