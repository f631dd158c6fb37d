package simpleauth

import com.nimbusds.jose.{JOSEException, JWSAlgorithm, JWSHeader, JWSSigner}
import com.nimbusds.jose.jca.JCAContext
import com.nimbusds.jose.util.Base64URL
import java.security.{PrivateKey, Signature}

/**
 * A Nimbus `JWSSigner` on a plain JCA `Signature`, for all three algorithms (contract §2), so that it runs on the
 * first provider that has the algorithm: Amazon Corretto Crypto Provider (AWS-LC) when it is installed
 * ([[NativeCrypto]]), else the JDK's. Nimbus' own `Ed25519Signer` is not used (it needs Google Tink and signs in
 * Java), nor its `ECDSASigner` (it asks the JCA for DER and transcodes to `R‖S`; ES256 here asks for the P1363 form
 * JOSE wants, RFC 7518 §3.4).
 *
 * A `Signature` is not thread-safe, so each thread keeps one, initialised once with the key: `sign()` resets it for
 * the next message with the same key, so no provider lookup or key translation happens per token (ACCP converts
 * the JDK's Ed25519 key to a native key in `initSign`, once per thread instead of once per signature).
 */
final class JcaJwsSigner(algorithm: JWSAlgorithm, jcaSignature: String, privateKey: PrivateKey) extends JWSSigner {
  private val context = new JCAContext()

  private val signatures: ThreadLocal[Signature] = ThreadLocal.withInitial { () =>
    val signature = Signature.getInstance(jcaSignature)
    signature.initSign(privateKey)
    signature
  }

  /** The provider that signs, e.g. "AmazonCorrettoCryptoProvider 2.5.0" (chosen when the key is bound). */
  def provider: String = {
    val p = signatures.get().getProvider
    s"${p.getName} ${p.getVersionStr}"
  }

  override def supportedJWSAlgorithms(): java.util.Set[JWSAlgorithm] = java.util.Set.of(algorithm)

  override def getJCAContext: JCAContext = context

  override def sign(header: JWSHeader, signingInput: Array[Byte]): Base64URL = {
    if (header.getAlgorithm != algorithm)
      throw new JOSEException(s"this signer signs ${algorithm.getName}, not ${header.getAlgorithm}")
    val signature = signatures.get()
    signature.update(signingInput)
    Base64URL.encode(signature.sign())
  }
}
