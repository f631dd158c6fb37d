package io.simpleauth.token;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.simpleauth.config.Settings;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.security.oauth2.jwt.JwsHeader;
import org.springframework.security.oauth2.jwt.JwtEncoder;

/**
 * The keys in service, as one immutable snapshot: the signing key with its encoder and the two token headers, and
 * the JWKS — the signing key first, then the keys of {@code JWT_PUBLIC_KEYS_FILE} in file order, each kid once
 * (spec/README §3) — serialised once. {@link KeyRing} swaps the whole snapshot on SIGHUP, so a token pair, a JWKS
 * answer and a discovery answer each see one key set, never half of two.
 */
public final class KeySet {

	/** RFC 9068 §2.1: the access token's {@code typ}. */
	public static final String ACCESS_TOKEN_TYPE = "at+jwt";

	/** The ID token's {@code typ}. */
	public static final String ID_TOKEN_TYPE = "JWT";

	private final SigningKey signingKey;

	private final JwtEncoder encoder;

	private final JwsHeader accessTokenHeader;

	private final JwsHeader idTokenHeader;

	private final List<VerificationKey> published;

	private final byte[] jwksJson;

	private KeySet(SigningKey signingKey, List<VerificationKey> bundle) {
		this.signingKey = signingKey;
		this.encoder = signingKey.jwtEncoder();
		this.accessTokenHeader = JwsHeader.with(signingKey.algorithm())
			.type(ACCESS_TOKEN_TYPE)
			.keyId(signingKey.kid())
			.build();
		this.idTokenHeader = JwsHeader.with(signingKey.algorithm()).type(ID_TOKEN_TYPE).keyId(signingKey.kid()).build();
		List<VerificationKey> keys = new ArrayList<>();
		Set<String> kids = new HashSet<>();
		keys.add(signingKey.verificationKey());
		kids.add(signingKey.kid());
		for (VerificationKey key : bundle) {
			if (kids.add(key.kid())) {
				keys.add(key);
			}
		}
		this.published = List.copyOf(keys);
		this.jwksJson = JsonMapper.shared()
			.writeValueAsBytes(Map.of("keys", this.published.stream().map(VerificationKey::jwk).toList()));
	}

	/** The signing key and the bundle as they are. */
	public static KeySet of(SigningKey signingKey, List<VerificationKey> bundle) {
		return new KeySet(signingKey, bundle);
	}

	/**
	 * Reads the keys the settings name — the signing key ({@code JWT_PRIVATE_KEY_FILE}, else the inline
	 * {@code JWT_PRIVATE_KEY}) and {@code JWT_PUBLIC_KEYS_FILE} if set — with the start-up rules: anything refused is a
	 * {@code SettingsException} saying why (never with key material).
	 */
	public static KeySet load(Settings settings) {
		SigningKey signingKey = SigningKey.fromPem(settings.signingKeyPem());
		String bundle = settings.publicKeysPem();
		return new KeySet(signingKey, bundle != null ? PublicKeyBundle.parse(bundle) : List.of());
	}

	public SigningKey signingKey() {
		return this.signingKey;
	}

	public SigningAlgorithm algorithm() {
		return this.signingKey.algorithm();
	}

	public String kid() {
		return this.signingKey.kid();
	}

	JwtEncoder encoder() {
		return this.encoder;
	}

	JwsHeader accessTokenHeader() {
		return this.accessTokenHeader;
	}

	JwsHeader idTokenHeader() {
		return this.idTokenHeader;
	}

	/** Every key the JWKS publishes, the signing key first. */
	public List<VerificationKey> published() {
		return this.published;
	}

	/** The JWK set (RFC 7517) as served: {@code {"keys":[...]}}, each JWK's members in the contract's order. */
	public byte[] jwksJson() {
		return this.jwksJson.clone();
	}

	@Override
	public String toString() {
		return "KeySet[" + this.signingKey + ", published=" + this.published.size() + "]";
	}

}
