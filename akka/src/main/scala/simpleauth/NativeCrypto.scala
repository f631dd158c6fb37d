package simpleauth

import com.amazon.corretto.crypto.provider.AmazonCorrettoCryptoProvider
import java.security.Signature
import scala.util.control.NonFatal

/**
 * Puts Amazon Corretto Crypto Provider (AWS-LC, native) first in the JCA provider list, so the two RS256
 * signatures of every token request run at OpenSSL speed instead of the JDK's (about 1,700 against 600
 * RSA-2048 signatures per second per core measured here). akka, zio and Spring make the same choice.
 * Must run before the signing key is parsed: a key made by ACCP's `KeyFactory` stays a native key, so
 * signing does not convert it on every call.
 *
 * The build bundles ACCP's native library for the build machine's platform (Linux x86-64 or aarch64, see
 * build.sbt); where it cannot load, the JDK's providers stay in charge: the service logs one warning and the
 * start-up line's `rsa` field names the provider.
 */
object NativeCrypto {

  /** Installs ACCP if its native library loads; otherwise returns why not. */
  def install(): Option[String] =
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

  /** The provider RS256 signing actually uses, e.g. "AmazonCorrettoCryptoProvider 2.5.0". */
  def rsaProvider: String = {
    val provider = Signature.getInstance("SHA256withRSA").getProvider
    s"${provider.getName} ${provider.getVersionStr}"
  }
}
