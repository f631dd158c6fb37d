//! `TokenSigner`: the signing key, the two RS256 tokens of a login and the
//! JWK set, through jsonwebtoken (`encode`, `Jwk`, `JwkSet`, RFC 7638
//! thumbprints) on its aws-lc-rs provider, with the key pair parsed once
//! (`parsed_key_provider`).

use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::signature::RsaKeyPair;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, JwkSet, PublicKeyUse, ThumbprintHash};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::parsed_key_provider;
use crate::settings::{KeySource, Settings};
use crate::user::User;

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

/// The two tokens of one login. The web layer turns it into the response body.
#[derive(Debug)]
pub struct TokenPair {
    pub access_token: String,
    pub id_token: String,
    pub expires_in: u64,
}

/// The claims both tokens carry; the access token carries exactly these.
#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    aud: &'a str,
    sub: &'a str,
    iat: u64,
    exp: u64,
    sid: &'a str,
    jti: &'a str,
}

/// The ID token: the common claims, then the user's profile and `at_hash`.
#[derive(Serialize)]
struct IdClaims<'a> {
    #[serde(flatten)]
    common: Claims<'a>,
    name: &'a str,
    preferred_username: &'a str,
    email: &'a str,
    at_hash: &'a str,
}

/// Issues the token pair with the one configured key.
pub struct TokenSigner {
    key: EncodingKey,
    header: Header,
    kid: String,
    bits: usize,
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
    /// The signer of `settings`: the key from JWT_PRIVATE_KEY_FILE or
    /// JWT_PRIVATE_KEY, checked and parsed once.
    pub fn from_settings(settings: &Settings) -> Result<Self, KeyError> {
        let pem = match &settings.key {
            KeySource::File(path) => std::fs::read_to_string(path).map_err(|e| KeyError::Unreadable {
                path: format!("JWT_PRIVATE_KEY_FILE={path}"),
                reason: e.to_string(),
            })?,
            KeySource::Inline(pem) => pem.clone(),
        };
        Self::from_pem(&pem, settings.issuer.clone(), settings.audience.clone(), settings.token_ttl_seconds)
    }

    /// Loads a PKCS#8 PEM RSA private key of at least 2048 bits.
    pub fn from_pem(pem_text: &str, issuer: String, audience: String, ttl_seconds: u64) -> Result<Self, KeyError> {
        let block = pem::parse(pem_text.trim()).map_err(|e| KeyError::NotPem(e.to_string()))?;
        match block.tag() {
            "PRIVATE KEY" => {}
            "RSA PRIVATE KEY" => return Err(KeyError::Pkcs1),
            other => return Err(KeyError::WrongPemLabel(other.to_owned())),
        }
        let key_pair = RsaKeyPair::from_pkcs8(block.contents()).map_err(|e| KeyError::NotRsa(e.to_string()))?;
        let bits = key_pair.public_modulus_len() * 8;
        if bits < MIN_RSA_BITS {
            return Err(KeyError::TooSmall(bits));
        }
        let key = EncodingKey::from_rsa_pem(pem_text.trim().as_bytes()).map_err(|e| KeyError::NotRsa(e.to_string()))?;
        // Before the JWK below: it asks jsonwebtoken for its default provider.
        parsed_key_provider::register(&key, key_pair);

        let not_rsa = |e: jsonwebtoken::errors::Error| KeyError::NotRsa(e.to_string());
        let mut jwk = Jwk::from_encoding_key(&key, Algorithm::RS256).map_err(not_rsa)?;
        jwk.common.public_key_use = Some(PublicKeyUse::Signature);
        let kid = jwk.thumbprint(ThumbprintHash::SHA256).map_err(not_rsa)?;
        jwk.common.key_id = Some(kid.clone());
        let jwks_json = serde_json::to_vec(&JwkSet { keys: vec![jwk] }).map_err(|e| KeyError::NotRsa(e.to_string()))?;
        let header = Header { kid: Some(kid.clone()), ..Header::new(Algorithm::RS256) };

        Ok(TokenSigner { key, header, kid, bits, jwks_json, issuer, audience, ttl_seconds })
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

    /// Issues an access token and an ID token for `user`, issued now.
    pub fn issue(&self, user: &User) -> Result<TokenPair, jsonwebtoken::errors::Error> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        self.issue_at(user, now)
    }

    /// The two tokens share one fresh `sid`, each has its own `jti`, both are
    /// issued at `now` (seconds since the epoch).
    pub fn issue_at(&self, user: &User, now: u64) -> Result<TokenPair, jsonwebtoken::errors::Error> {
        let sub = user.id.hyphenated().to_string();
        let sid = Uuid::new_v4().hyphenated().to_string();
        let access_jti = Uuid::new_v4().hyphenated().to_string();
        let id_jti = Uuid::new_v4().hyphenated().to_string();
        let exp = now + self.ttl_seconds;
        let (iss, aud) = (self.issuer.as_str(), self.audience.as_str());

        let access_claims = Claims { iss, aud, sub: &sub, iat: now, exp, sid: &sid, jti: &access_jti };
        let access_token = jsonwebtoken::encode(&self.header, &access_claims, &self.key)?;
        let at_hash = at_hash(&access_token);
        let id_claims = IdClaims {
            common: Claims { jti: &id_jti, ..access_claims },
            name: &user.name,
            preferred_username: &user.username,
            email: &user.email,
            at_hash: &at_hash,
        };
        let id_token = jsonwebtoken::encode(&self.header, &id_claims, &self.key)?;
        Ok(TokenPair { access_token, id_token, expires_in: self.ttl_seconds })
    }
}

/// OIDC Core §3.1.3.6: base64url of the left-most 128 bits of SHA-256 of the
/// ASCII octets of the access token.
pub fn at_hash(access_token: &str) -> String {
    let digest = Sha256::digest(access_token.as_bytes());
    URL_SAFE_NO_PAD.encode(&digest[..16])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_vectors::{dev_key_pem, spec_dir, vectors};
    use jsonwebtoken::jwk::{AlgorithmParameters, RSAKeyParameters};
    use jsonwebtoken::{DecodingKey, Validation, decode};

    fn signer(bits: u64) -> TokenSigner {
        TokenSigner::from_pem(&dev_key_pem(bits), "https://issuer.test".into(), "aud-test".into(), 900)
            .expect("dev key")
    }

    fn user(id: Uuid, username: &str, name: &str, email: &str) -> User {
        User { id, username: username.into(), name: name.into(), email: email.into(), password_hash: String::new() }
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
        let public = Jwk {
            common: Default::default(),
            algorithm: AlgorithmParameters::RSA(RSAKeyParameters {
                key_type: Default::default(),
                n: jwk["n"].as_str().expect("n").to_owned(),
                e: jwk["e"].as_str().expect("e").to_owned(),
            }),
        };
        assert_eq!(public.thumbprint(ThumbprintHash::SHA256).expect("thumbprint"), expected);
        assert_eq!(expected, entry["kid"].as_str().expect("kid"));
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
        let pair = s.issue_at(&user(id, "johndoe", "John Doe", "john@example.com"), 1_700_000_000).expect("signed");
        assert_eq!(pair.expires_in, 900);

        // jsonwebtoken's `Header` writes its members in this order.
        let expected_header = format!(r#"{{"typ":"JWT","alg":"RS256","kid":"{}"}}"#, s.kid());
        for token in [&pair.access_token, &pair.id_token] {
            let header = token.split('.').next().expect("header");
            assert_eq!(URL_SAFE_NO_PAD.decode(header).expect("b64"), expected_header.as_bytes());
            assert_eq!(b64_json(header), serde_json::json!({ "alg": "RS256", "typ": "JWT", "kid": s.kid() }));
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
        let pair = s.issue(&user(Uuid::new_v4(), "u", "N", "e@x")).expect("signed");
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
        let subject = user(Uuid::new_v4(), "u", "N", "e@x");
        let a = s.issue_at(&subject, 1).expect("a");
        let b = s.issue_at(&subject, 1).expect("b");
        let sid = |t: &str| b64_json(t.split('.').nth(1).expect("claims"))["sid"].clone();
        assert_ne!(sid(&a.access_token), sid(&b.access_token));
    }

    #[test]
    fn a_flattened_inline_key_loads_like_the_file() {
        let pem = dev_key_pem(2048);
        let flattened = pem.trim().replace('\n', "\\n");
        let settings =
            Settings::from_lookup(|name| (name == "JWT_PRIVATE_KEY").then(|| flattened.clone())).expect("settings");
        assert_eq!(TokenSigner::from_settings(&settings).expect("flattened key").kid(), signer(2048).kid());
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
        let missing = Settings::from_lookup(|name| (name == "JWT_PRIVATE_KEY_FILE").then(|| "/nonexistent.pem".into()))
            .expect("settings");
        let text = TokenSigner::from_settings(&missing).expect_err("missing file").to_string();
        assert!(text.contains("JWT_PRIVATE_KEY_FILE=/nonexistent.pem"), "{text}");
    }
}
