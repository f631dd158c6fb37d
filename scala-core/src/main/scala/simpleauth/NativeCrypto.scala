package simpleauth

import com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider
import java.security.{PrivateKey, Signature}
import scala.util.control.NonFatal

/**
 * Puts Amazon Corretto Crypto Provider (AWS-LC, native) first in the JCA provider list, so the two
 * signatures of every token request run at OpenSSL speed instead of the JDK's (docs/stacks/akka.md has the
 * measurements). ACCP 2.5.0 also provides ES256 (`SHA256withECDSAinP1363Format`) and `Ed25519` (EdDSA), so all
 * three algorithms sign natively (checked at runtime: [[signatureProvider]], the start-up line, `NativeCryptoSpec`).
 * akka, zio and Spring make the same choice.
 * Must run before the signing key is parsed: an RSA or EC key made by ACCP's `KeyFactory` stays a native
 * key, so signing does not convert it on every call. (ACCP has no Ed25519 `KeyFactory`: that key is the
 * JDK's, converted once per signing thread, see [[JcaJwsSigner]].)
 *
 * The build bundles ACCP's native library for the build machine's platform (Linux x86-64 or aarch64, see
 * build.sbt); where it cannot load, the JDK's providers stay in charge: the service logs one warning and the
 * start-up line's `provider` field names the provider.
 */
object NativeCrypto {

  /**
   * Installs ACCP if its native library loads; otherwise returns why not. Once per process, whoever asks first: the
   * key loader ([[KeySources.load]]), before it parses a key, or the service's start-up line.
   */
  def install(): Option[String] = installed

  private lazy val installed: Option[String] =
    try {
      Option(AmazonCorrettoCryptoProvider.INSTANCE.getLoadingError) match {
        case Some(error) => Some(String.valueOf(error.getMessage))
        case None =>
          AmazonCorrettoCryptoProvider.install()
          AmazonCorrettoCryptoProvider.INSTANCE.assertHealthy()
          None
      }
    } catch {
      case e: LinkageError => Some(e.toString)
      case NonFatal(e)     => Some(e.toString)
    }

  /**
   * The provider the JCA picks for `algorithm` with `key`, e.g. "AmazonCorrettoCryptoProvider 2.5.0": what a
   * signer that asks for `Signature.getInstance(algorithm)` (as Nimbus' do) signs with. The choice is made
   * when the key is bound, so the key is bound here too.
   */
  def signatureProvider(algorithm: String, key: PrivateKey): String = {
    val signature = Signature.getInstance(algorithm)
    signature.initSign(key)
    val provider = signature.getProvider
    s"${provider.getName} ${provider.getVersionStr}"
  }

  /** The provider the JCA picks for `algorithm` when no key is bound yet, e.g. "AmazonCorrettoCryptoProvider 2.5.0". */
  def providerOf(algorithm: String): String = {
    val provider = Signature.getInstance(algorithm).getProvider
    s"${provider.getName} ${provider.getVersionStr}"
  }
}
