//! The signing key, the two RS256 tokens and the JWKS.
//!
//! Signing goes through jsonwebtoken's aws-lc-rs backend, with one change:
//! its stock signer re-parses the DER key on every signature (about half the
//! throughput), so a `CryptoProvider` is installed whose RS256 signer reuses
//! the key pair parsed once at start-up. The JOSE header is fixed per key, so
//! its base64url form is computed once too.

use std::sync::{Arc, LazyLock, Once, RwLock};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{KeyPair, RSA_PKCS1_SHA256, RsaKeyPair, RsaPublicKeyComponents};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::crypto::{CryptoProvider, JwtSigner};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde::Serialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;

pub const MIN_RSA_BITS: usize = 2048;

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("JWT private key could not be read from {path}: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("JWT private key is not PEM: {0}")]
    NotPem(String),
    #[error(
        "JWT private key is PKCS#1 (BEGIN RSA PRIVATE KEY), which is refused: convert it with `openssl pkcs8 -topk8 -nocrypt -in key.pem -out key-pkcs8.pem`"
    )]
    Pkcs1,
    #[error("JWT private key must be a PKCS#8 PEM (BEGIN PRIVATE KEY), found BEGIN {0}")]
    WrongPemLabel(String),
    #[error(
        "JWT private key is not a usable RSA key (PKCS#8, at least 2048 bits; EC and other types are refused): {0}"
    )]
    NotRsa(String),
    #[error("JWT private key is {0} bits; at least 2048 are required")]
    TooSmall(usize),
}

/// The user fields the ID token carries.
#[derive(Debug, Clone)]
pub struct Subject<'a> {
    pub id: Uuid,
    pub username: &'a str,
    pub name: &'a str,
    pub email: &'a str,
}

#[derive(Debug, Serialize)]
pub struct TokenPair {
    pub access_token: String,
    pub id_token: String,
    pub token_type: &'static str,
    pub expires_in: u64,
}

#[derive(Serialize)]
struct AccessClaims<'a> {
    iss: &'a str,
    aud: &'a str,
    sub: &'a str,
    iat: u64,
    exp: u64,
    sid: &'a str,
    jti: &'a str,
}

#[derive(Serialize)]
struct IdClaims<'a> {
    iss: &'a str,
    aud: &'a str,
    sub: &'a str,
    iat: u64,
    exp: u64,
    sid: &'a str,
    jti: &'a str,
    name: &'a str,
    preferred_username: &'a str,
    email: &'a str,
    at_hash: &'a str,
}

#[derive(Serialize)]
struct JoseHeader<'a> {
    alg: &'static str,
    typ: &'static str,
    kid: &'a str,
}

#[derive(Serialize)]
struct Jwk<'a> {
    kty: &'static str,
    #[serde(rename = "use")]
    use_: &'static str,
    alg: &'static str,
    kid: &'a str,
    n: &'a str,
    e: &'a str,
}

#[derive(Serialize)]
struct JwkSet<'a> {
    keys: [Jwk<'a>; 1],
}

/// Issues the token pair with the one configured key.
pub struct TokenSigner {
    key: EncodingKey,
    kid: String,
    bits: usize,
    header_b64: String,
    jwks_json: Vec<u8>,
    issuer: String,
    audience: String,
    ttl_seconds: u64,
}

impl std::fmt::Debug for TokenSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSigner").field("kid", &self.kid).field("bits", &self.bits).finish_non_exhaustive()
    }
}

impl TokenSigner {
    /// Loads a PKCS#8 PEM RSA private key of at least 2048 bits.
    pub fn from_pem(pem_text: &str, issuer: String, audience: String, ttl_seconds: u64) -> Result<Self, KeyError> {
        let block = pem::parse(pem_text.trim()).map_err(|e| KeyError::NotPem(e.to_string()))?;
        match block.tag() {
            "PRIVATE KEY" => {}
            "RSA PRIVATE KEY" => return Err(KeyError::Pkcs1),
            other => return Err(KeyError::WrongPemLabel(other.to_owned())),
        }
        let pkcs8 = block.contents();
        let key_pair = RsaKeyPair::from_pkcs8(pkcs8).map_err(|e| KeyError::NotRsa(e.to_string()))?;
        let bits = key_pair.public_modulus_len() * 8;
        if bits < MIN_RSA_BITS {
            return Err(KeyError::TooSmall(bits));
        }
        let components = RsaPublicKeyComponents::<Vec<u8>>::from(key_pair.public_key());
        let n = URL_SAFE_NO_PAD.encode(strip_leading_zeros(&components.n));
        let e = URL_SAFE_NO_PAD.encode(strip_leading_zeros(&components.e));
        let kid = thumbprint(&n, &e);

        let key = EncodingKey::from_rsa_pem(pem_text.trim().as_bytes()).map_err(|e| KeyError::NotRsa(e.to_string()))?;
        install_provider();
        register_parsed_key(key.as_bytes(), key_pair);

        let header = JoseHeader { alg: "RS256", typ: "JWT", kid: &kid };
        let header_b64 =
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&header).map_err(|e| KeyError::NotRsa(e.to_string()))?);
        let jwk = Jwk { kty: "RSA", use_: "sig", alg: "RS256", kid: &kid, n: &n, e: &e };
        let jwks_json = serde_json::to_vec(&JwkSet { keys: [jwk] }).map_err(|e| KeyError::NotRsa(e.to_string()))?;

        Ok(TokenSigner { key, kid, bits, header_b64, jwks_json, issuer, audience, ttl_seconds })
    }

    pub fn kid(&self) -> &str {
        &self.kid
    }

    pub fn bits(&self) -> usize {
        self.bits
    }

    /// The body of `GET /.well-known/jwks.json`, built once.
    pub fn jwks_json(&self) -> &[u8] {
        &self.jwks_json
    }

    /// Issues an access token and an ID token sharing one fresh `sid`, each
    /// with its own `jti`, both issued at `now` (seconds since the epoch).
    pub fn issue(&self, subject: &Subject<'_>, now: u64) -> Result<TokenPair, jsonwebtoken::errors::Error> {
        let sub = subject.id.hyphenated().to_string();
        let sid = Uuid::new_v4().hyphenated().to_string();
        let access_jti = Uuid::new_v4().hyphenated().to_string();
        let id_jti = Uuid::new_v4().hyphenated().to_string();
        let exp = now + self.ttl_seconds;

        let access_token = self.sign(&AccessClaims {
            iss: &self.issuer,
            aud: &self.audience,
            sub: &sub,
            iat: now,
            exp,
            sid: &sid,
            jti: &access_jti,
        })?;
        let at_hash = at_hash(&access_token);
        let id_token = self.sign(&IdClaims {
            iss: &self.issuer,
            aud: &self.audience,
            sub: &sub,
            iat: now,
            exp,
            sid: &sid,
            jti: &id_jti,
            name: subject.name,
            preferred_username: subject.username,
            email: subject.email,
            at_hash: &at_hash,
        })?;
        Ok(TokenPair { access_token, id_token, token_type: "Bearer", expires_in: self.ttl_seconds })
    }

    fn sign<T: Serialize>(&self, claims: &T) -> Result<String, jsonwebtoken::errors::Error> {
        let claims_json = serde_json::to_vec(claims)?;
        let mut token = String::with_capacity(self.header_b64.len() + claims_json.len() * 4 / 3 + 350);
        token.push_str(&self.header_b64);
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(&claims_json, &mut token);
        let signature = jsonwebtoken::crypto::sign(token.as_bytes(), &self.key, Algorithm::RS256)?;
        token.push('.');
        token.push_str(&signature);
        Ok(token)
    }
}

fn strip_leading_zeros(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len().saturating_sub(1));
    &bytes[start..]
}

/// RFC 7638 thumbprint: SHA-256 over the required members in lexicographic order.
pub fn thumbprint(n_b64: &str, e_b64: &str) -> String {
    let input = format!(r#"{{"e":"{e_b64}","kty":"RSA","n":"{n_b64}"}}"#);
    URL_SAFE_NO_PAD.encode(Sha256::digest(input.as_bytes()))
}

/// OIDC Core §3.1.3.6: base64url of the left-most 128 bits of SHA-256 of the
/// ASCII octets of the access token.
pub fn at_hash(access_token: &str) -> String {
    let digest = Sha256::digest(access_token.as_bytes());
    URL_SAFE_NO_PAD.encode(&digest[..16])
}

// ---------------------------------------------------------------- crypto provider

/// Key pairs parsed at start-up, found again by the DER bytes jsonwebtoken
/// hands the signer factory. One entry in the service; tests may add more.
static PARSED_KEYS: RwLock<Vec<(Vec<u8>, Arc<RsaKeyPair>)>> = RwLock::new(Vec::new());

static PROVIDER: LazyLock<CryptoProvider> = LazyLock::new(|| CryptoProvider {
    signer_factory: cached_rsa_signer,
    ..jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.clone()
});

fn install_provider() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Fails only if a provider was already chosen; signing then takes the
        // stock (slower, still correct) path.
        let _ = PROVIDER.install_default();
    });
}

/// Seeds AWS-LC's random generator on a thread of its own.
///
/// The first random bytes a process asks AWS-LC for (RSA blinding, in the
/// first signature) seed its generator from CPU jitter: ~30 ms of CPU on the
/// benchmark VM, once per process. Started before the server binds, the seeding
/// overlaps binding and the pool's first connection instead of following them
/// inside the first request. Nothing is skipped: a request that comes earlier
/// waits for the same one-time seeding (AWS-LC runs it once).
pub fn seed_random_in_background() {
    let spawned = std::thread::Builder::new().name("rng-seed".into()).spawn(|| {
        let mut byte = [0u8; 1];
        if aws_lc_rs::rand::fill(&mut byte).is_err() {
            tracing::warn!(
                "AWS-LC's random generator could not be seeded at start-up; the first signature will try again"
            );
        }
    });
    if let Err(e) = spawned {
        tracing::debug!("no thread to seed the random generator ({e}); the first signature seeds it");
    }
}

fn register_parsed_key(der: &[u8], key_pair: RsaKeyPair) {
    let mut keys = match PARSED_KEYS.write() {
        Ok(keys) => keys,
        Err(poisoned) => poisoned.into_inner(),
    };
    if !keys.iter().any(|(known, _)| known == der) {
        keys.push((der.to_vec(), Arc::new(key_pair)));
    }
}

fn cached_rsa_signer(alg: &Algorithm, key: &EncodingKey) -> jsonwebtoken::errors::Result<Box<dyn JwtSigner>> {
    if *alg == Algorithm::RS256 {
        let keys = match PARSED_KEYS.read() {
            Ok(keys) => keys,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some((_, key_pair)) = keys.iter().find(|(der, _)| der.as_slice() == key.as_bytes()) {
            return Ok(Box::new(ParsedRs256Signer(Arc::clone(key_pair))));
        }
    }
    (jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.signer_factory)(alg, key)
}

struct ParsedRs256Signer(Arc<RsaKeyPair>);

impl jsonwebtoken::signature::Signer<Vec<u8>> for ParsedRs256Signer {
    fn try_sign(&self, msg: &[u8]) -> Result<Vec<u8>, jsonwebtoken::signature::Error> {
        let mut signature = vec![0; self.0.public_modulus_len()];
        self.0
            .sign(&RSA_PKCS1_SHA256, &SystemRandom::new(), msg, &mut signature)
            .map_err(jsonwebtoken::signature::Error::from_source)?;
        Ok(signature)
    }
}

impl JwtSigner for ParsedRs256Signer {
    fn algorithm(&self) -> Algorithm {
        Algorithm::RS256
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_vectors::{dev_key_pem, spec_dir, vectors};
    use jsonwebtoken::{DecodingKey, Validation, decode};

    fn signer(bits: u64) -> TokenSigner {
        TokenSigner::from_pem(&dev_key_pem(bits), "https://issuer.test".into(), "aud-test".into(), 900)
            .expect("dev key")
    }

    fn b64_json(part: &str) -> serde_json::Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).expect("b64url")).expect("json")
    }

    #[test]
    fn kid_and_jwk_match_the_vectors() {
        let v = vectors();
        for entry in v["keys"].as_array().expect("keys") {
            let bits = entry["bits"].as_u64().expect("bits");
            let s = signer(bits);
            assert_eq!(s.kid(), entry["kid"].as_str().expect("kid"));
            assert_eq!(s.bits() as u64, bits);
            let jwks: serde_json::Value = serde_json::from_slice(s.jwks_json()).expect("jwks json");
            assert_eq!(jwks, serde_json::json!({ "keys": [entry["jwk"].clone()] }));
        }
    }

    #[test]
    fn thumbprint_input_matches_the_vector() {
        let v = vectors();
        let entry = &v["keys"][0];
        let input = entry["thumbprint_input"].as_str().expect("input");
        let jwk = &entry["jwk"];
        let expected = URL_SAFE_NO_PAD.encode(Sha256::digest(input.as_bytes()));
        assert_eq!(thumbprint(jwk["n"].as_str().expect("n"), jwk["e"].as_str().expect("e")), expected);
    }

    #[test]
    fn at_hash_matches_the_vectors() {
        let v = vectors();
        for pair in v["at_hash"].as_array().expect("at_hash") {
            assert_eq!(at_hash(pair["access_token"].as_str().expect("token")), pair["at_hash"].as_str().expect("hash"));
        }
    }

    #[test]
    fn token_pair_headers_and_exact_claims() {
        let s = signer(2048);
        let id = Uuid::new_v4();
        let subject = Subject { id, username: "johndoe", name: "John Doe", email: "john@example.com" };
        let pair = s.issue(&subject, 1_700_000_000).expect("signed");
        assert_eq!(pair.token_type, "Bearer");
        assert_eq!(pair.expires_in, 900);

        let expected_header = format!(r#"{{"alg":"RS256","typ":"JWT","kid":"{}"}}"#, s.kid());
        for token in [&pair.access_token, &pair.id_token] {
            let header = token.split('.').next().expect("header");
            assert_eq!(URL_SAFE_NO_PAD.decode(header).expect("b64"), expected_header.as_bytes());
        }

        let access = b64_json(pair.access_token.split('.').nth(1).expect("claims"));
        let ident = b64_json(pair.id_token.split('.').nth(1).expect("claims"));
        let keys = |v: &serde_json::Value| {
            let mut k: Vec<String> = v.as_object().expect("object").keys().cloned().collect();
            k.sort();
            k
        };
        assert_eq!(keys(&access), ["aud", "exp", "iat", "iss", "jti", "sid", "sub"]);
        assert_eq!(
            keys(&ident),
            ["at_hash", "aud", "email", "exp", "iat", "iss", "jti", "name", "preferred_username", "sid", "sub"]
        );
        assert_eq!(access["iss"], "https://issuer.test");
        assert_eq!(access["aud"], "aud-test");
        assert_eq!(access["sub"], id.to_string());
        assert_eq!(access["iat"], 1_700_000_000u64);
        assert_eq!(access["exp"], 1_700_000_900u64);
        assert_eq!(access["sid"], ident["sid"]);
        assert_ne!(access["jti"], ident["jti"]);
        assert_eq!((&access["iat"], &access["exp"]), (&ident["iat"], &ident["exp"]));
        assert_eq!(ident["name"], "John Doe");
        assert_eq!(ident["preferred_username"], "johndoe");
        assert_eq!(ident["email"], "john@example.com");
        assert_eq!(ident["at_hash"], at_hash(&pair.access_token));
    }

    #[test]
    fn signatures_verify_with_the_public_key() {
        let s = signer(2048);
        let jwk = &vectors()["keys"][0]["jwk"];
        let key = DecodingKey::from_rsa_components(jwk["n"].as_str().expect("n"), jwk["e"].as_str().expect("e"))
            .expect("public key");
        let now = jsonwebtoken::get_current_timestamp();
        let subject = Subject { id: Uuid::new_v4(), username: "u", name: "N", email: "e@x" };
        let pair = s.issue(&subject, now).expect("signed");
        let mut validation = Validation::new(Algorithm::RS256);
        validation.set_audience(&["aud-test"]);
        validation.set_issuer(&["https://issuer.test"]);
        for token in [&pair.access_token, &pair.id_token] {
            decode::<serde_json::Value>(token, &key, &validation).expect("valid signature");
        }
        // The stock signer (no parsed-key cache) yields the same deterministic signature.
        let message = pair.access_token.rsplit_once('.').expect("dot").0;
        let stock = (jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.signer_factory)(&Algorithm::RS256, &s.key)
            .expect("stock signer");
        let stock_sig = URL_SAFE_NO_PAD.encode(stock.try_sign(message.as_bytes()).expect("signed"));
        assert_eq!(pair.access_token.rsplit_once('.').expect("dot").1, stock_sig);
    }

    #[test]
    fn fresh_sid_and_jti_per_call() {
        let s = signer(2048);
        let subject = Subject { id: Uuid::new_v4(), username: "u", name: "N", email: "e@x" };
        let a = s.issue(&subject, 1).expect("a");
        let b = s.issue(&subject, 1).expect("b");
        let sid = |t: &str| b64_json(t.split('.').nth(1).expect("claims"))["sid"].clone();
        assert_ne!(sid(&a.access_token), sid(&b.access_token));
    }

    #[test]
    fn invalid_keys_are_refused() {
        let invalid = spec_dir().join("keys").join("invalid");
        for (file, expect) in
            [("rsa-2048-pkcs1.pem", "PKCS#1"), ("rsa-1024-pkcs8.pem", "key"), ("ec-p256-pkcs8.pem", "key")]
        {
            let pem = std::fs::read_to_string(invalid.join(file)).expect("invalid key file");
            let err = TokenSigner::from_pem(&pem, "i".into(), "a".into(), 1).expect_err(file);
            let text = err.to_string();
            assert!(text.contains(expect), "{file}: {text}");
            assert!(text.contains("key"), "{file}: {text}");
        }
        let garbage = "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n";
        assert!(TokenSigner::from_pem(garbage, "i".into(), "a".into(), 1).is_err());
        assert!(TokenSigner::from_pem("", "i".into(), "a".into(), 1).is_err());
    }
}
