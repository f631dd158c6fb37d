//! `TokenSigner`: the signing key and the two tokens of a login, through
//! jsonwebtoken (`encode`, `Header`) on its aws-lc-rs provider, with the key
//! pair parsed once (`parsed_key_provider`). The key decides the algorithm
//! (RS256, ES256 or EdDSA; `signing_key`).

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;
use sha2::{Digest, Sha256, Sha512};
use uuid::Uuid;

use crate::parsed_key_provider::{self, ParsedKeyPair};
use crate::settings::{KeySource, Settings};
use crate::signing_key::{PublicJwk, SigningKey};
use crate::user::User;

pub use crate::signing_key::{KeyError, MIN_RSA_BITS};

/// The `typ` of the access token's header (RFC 9068 §2.1).
pub const ACCESS_TOKEN_TYP: &str = "at+jwt";
/// The `typ` of the ID token's header.
pub const ID_TOKEN_TYP: &str = "JWT";

/// The two tokens of one login. The web layer turns it into the response body.
#[derive(Debug)]
pub struct TokenPair {
    pub access_token: String,
    pub id_token: String,
    pub expires_in: u64,
}

/// The claims both tokens carry. `aud` differs: the access token's is the
/// resource (JWT_AUDIENCE, RFC 9068 §3), the ID token's the client (OIDC Core
/// §2), so neither passes as the other where `aud` is checked.
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

/// The access token (RFC 9068 §2.2): the common claims and `client_id`.
#[derive(Serialize)]
struct AccessClaims<'a> {
    #[serde(flatten)]
    common: Claims<'a>,
    client_id: &'a str,
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

/// Issues the token pair with one signing key.
pub struct TokenSigner {
    key: EncodingKey,
    /// Keeps this key's entry in `parsed_key_provider` alive.
    _parsed: Arc<ParsedKeyPair>,
    access_header: Header,
    id_header: Header,
    public: PublicJwk,
    rsa_bits: Option<usize>,
    issuer: String,
    audience: String,
    ttl_seconds: u64,
}

impl std::fmt::Debug for TokenSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSigner")
            .field("alg", &self.public.alg)
            .field("kid", &self.public.kid)
            .finish_non_exhaustive()
    }
}

impl TokenSigner {
    /// The signer of `settings`: the key from JWT_PRIVATE_KEY_FILE or
    /// JWT_PRIVATE_KEY, checked and parsed once (again at each reload).
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

    /// Loads a PKCS#8 PEM private key: RSA of at least 2048 bits, EC P-256 or Ed25519.
    pub fn from_pem(pem_text: &str, issuer: String, audience: String, ttl_seconds: u64) -> Result<Self, KeyError> {
        let SigningKey { encoding_key, key_pair, public, rsa_bits } = SigningKey::from_pem(pem_text)?;
        let parsed = parsed_key_provider::register(&encoding_key, key_pair);
        let header =
            |typ: &str| Header { typ: Some(typ.to_owned()), kid: Some(public.kid.clone()), ..Header::new(public.alg) };
        Ok(TokenSigner {
            key: encoding_key,
            _parsed: parsed,
            access_header: header(ACCESS_TOKEN_TYP),
            id_header: header(ID_TOKEN_TYP),
            rsa_bits,
            public,
            issuer,
            audience,
            ttl_seconds,
        })
    }

    pub fn kid(&self) -> &str {
        &self.public.kid
    }

    pub fn alg(&self) -> Algorithm {
        self.public.alg
    }

    /// The signing key's public JWK.
    pub fn public_jwk(&self) -> &PublicJwk {
        &self.public
    }

    /// The RSA modulus size; `None` for ES256 and EdDSA keys.
    pub fn rsa_bits(&self) -> Option<usize> {
        self.rsa_bits
    }

    /// Issues an access token and an ID token for `user` in session `sid`
    /// (the refresh-token family), issued now, for the client `client_id`:
    /// the access token's `client_id` claim and the ID token's `aud`.
    pub fn issue(&self, user: &User, client_id: &str, sid: Uuid) -> Result<TokenPair, jsonwebtoken::errors::Error> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        self.issue_at(user, client_id, sid, now)
    }

    /// The two tokens share the `sid`, each has its own fresh `jti`, both are
    /// issued at `now` (seconds since the epoch).
    pub fn issue_at(
        &self,
        user: &User,
        client_id: &str,
        sid: Uuid,
        now: u64,
    ) -> Result<TokenPair, jsonwebtoken::errors::Error> {
        let sub = user.id.hyphenated().to_string();
        let sid = sid.hyphenated().to_string();
        let access_jti = Uuid::new_v4().hyphenated().to_string();
        let id_jti = Uuid::new_v4().hyphenated().to_string();
        let exp = now + self.ttl_seconds;
        let (iss, aud) = (self.issuer.as_str(), self.audience.as_str());

        let common = Claims { iss, aud, sub: &sub, iat: now, exp, sid: &sid, jti: &access_jti };
        let access_claims = AccessClaims { common, client_id };
        let access_token = jsonwebtoken::encode(&self.access_header, &access_claims, &self.key)?;
        let at_hash = at_hash(self.public.alg, &access_token);
        let id_claims = IdClaims {
            common: Claims { jti: &id_jti, aud: client_id, ..access_claims.common },
            name: &user.name,
            preferred_username: &user.username,
            email: &user.email,
            at_hash: &at_hash,
        };
        let id_token = jsonwebtoken::encode(&self.id_header, &id_claims, &self.key)?;
        Ok(TokenPair { access_token, id_token, expires_in: self.ttl_seconds })
    }
}

/// OIDC Core §3.1.3.6: base64url of the left-most half of the signing
/// algorithm's hash of the ASCII octets of the access token — SHA-256 for
/// RS256 and ES256, SHA-512 for EdDSA with Ed25519.
pub fn at_hash(alg: Algorithm, access_token: &str) -> String {
    match alg {
        Algorithm::EdDSA => URL_SAFE_NO_PAD.encode(&Sha512::digest(access_token.as_bytes())[..32]),
        _ => URL_SAFE_NO_PAD.encode(&Sha256::digest(access_token.as_bytes())[..16]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_vectors::{dev_key_pem, key_entries, key_entry, vectors};
    use jsonwebtoken::jwk::Jwk;
    use jsonwebtoken::{DecodingKey, Validation, decode};

    const KEY_TYPES: [&str; 4] = ["rsa-2048", "rsa-4096", "p-256", "ed25519"];

    fn signer(key_type: &str) -> TokenSigner {
        TokenSigner::from_pem(&dev_key_pem(key_type), "https://issuer.test".into(), "aud-test".into(), 900)
            .expect("dev key")
    }

    fn user(id: Uuid, username: &str, name: &str, email: &str) -> User {
        User { id, username: username.into(), name: name.into(), email: email.into(), password_hash: String::new() }
    }

    fn b64_json(part: &str) -> serde_json::Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).expect("b64url")).expect("json")
    }

    #[test]
    fn every_vector_key_type_is_tested() {
        let types: Vec<String> = key_entries().iter().map(|k| k["type"].as_str().expect("type").to_owned()).collect();
        assert_eq!(types, KEY_TYPES);
    }

    #[test]
    fn kid_alg_and_jwk_match_the_vectors() {
        for key_type in KEY_TYPES {
            let entry = key_entry(key_type);
            let s = signer(key_type);
            assert_eq!(s.kid(), entry["kid"].as_str().expect("kid"), "{key_type}");
            assert_eq!(format!("{:?}", s.alg()), entry["alg"].as_str().expect("alg"), "{key_type}");
            assert_eq!(s.rsa_bits().map(|b| b as u64), entry["bits"].as_u64(), "{key_type}");
            assert_eq!(serde_json::to_value(&s.public_jwk().jwk).expect("jwk"), entry["jwk"], "{key_type}");
        }
    }

    #[test]
    fn at_hash_matches_the_vectors_per_alg() {
        let v = vectors();
        let pairs = v["at_hash"].as_array().expect("at_hash");
        for alg in ["RS256", "ES256", "EdDSA"] {
            assert!(pairs.iter().any(|p| p["alg"] == alg), "no {alg} vector");
        }
        for pair in pairs {
            let alg: Algorithm = pair["alg"].as_str().expect("alg").parse().expect("an alg");
            let token = pair["access_token"].as_str().expect("token");
            assert_eq!(at_hash(alg, token), pair["at_hash"].as_str().expect("hash"), "{alg:?} {token:?}");
        }
    }

    #[test]
    fn token_pair_headers_and_exact_claims() {
        for key_type in KEY_TYPES {
            let s = signer(key_type);
            let alg = format!("{:?}", s.alg());
            let (id, sid) = (Uuid::new_v4(), Uuid::new_v4());
            let pair = s
                .issue_at(&user(id, "johndoe", "John Doe", "john@example.com"), "web-app", sid, 1_700_000_000)
                .expect("signed");
            assert_eq!(pair.expires_in, 900);

            // jsonwebtoken's `Header` writes its members in this order.
            for (token, typ) in [(&pair.access_token, "at+jwt"), (&pair.id_token, "JWT")] {
                let header = token.split('.').next().expect("header");
                let expected = format!(r#"{{"typ":"{typ}","alg":"{alg}","kid":"{}"}}"#, s.kid());
                assert_eq!(URL_SAFE_NO_PAD.decode(header).expect("b64"), expected.as_bytes(), "{key_type}");
                assert_eq!(b64_json(header), serde_json::json!({ "alg": alg, "typ": typ, "kid": s.kid() }));
            }

            let access = b64_json(pair.access_token.split('.').nth(1).expect("claims"));
            let ident = b64_json(pair.id_token.split('.').nth(1).expect("claims"));
            let keys = |v: &serde_json::Value| {
                let mut k: Vec<String> = v.as_object().expect("object").keys().cloned().collect();
                k.sort();
                k
            };
            assert_eq!(keys(&access), ["aud", "client_id", "exp", "iat", "iss", "jti", "sid", "sub"]);
            assert_eq!(
                keys(&ident),
                ["at_hash", "aud", "email", "exp", "iat", "iss", "jti", "name", "preferred_username", "sid", "sub"]
            );
            assert_eq!(access["client_id"], "web-app");
            assert_eq!(access["iss"], "https://issuer.test");
            assert_eq!(access["aud"], "aud-test", "the access token's audience is the resource");
            assert_eq!(ident["aud"], "web-app", "the ID token's audience is the client");
            assert_eq!(access["sub"], id.to_string());
            assert_eq!(access["iat"], 1_700_000_000u64);
            assert_eq!(access["exp"], 1_700_000_900u64);
            assert_eq!(access["sid"], sid.to_string());
            assert_eq!(ident["sid"], sid.to_string());
            assert_ne!(access["jti"], ident["jti"]);
            assert_eq!((&access["iat"], &access["exp"]), (&ident["iat"], &ident["exp"]));
            assert_eq!(ident["name"], "John Doe");
            assert_eq!(ident["preferred_username"], "johndoe");
            assert_eq!(ident["email"], "john@example.com");
            assert_eq!(ident["at_hash"], at_hash(s.alg(), &pair.access_token));
        }
    }

    #[test]
    fn signatures_verify_with_the_public_key_of_the_vectors() {
        for key_type in KEY_TYPES {
            let s = signer(key_type);
            let jwk: Jwk = serde_json::from_value(key_entry(key_type)["jwk"].clone()).expect("jwk");
            let key = DecodingKey::from_jwk(&jwk).expect("public key");
            let pair = s.issue(&user(Uuid::new_v4(), "u", "N", "e@x"), "public", Uuid::new_v4()).expect("signed");
            let validation = |audience: &str| {
                let mut validation = Validation::new(s.alg());
                validation.set_audience(&[audience]);
                validation.set_issuer(&["https://issuer.test"]);
                validation
            };
            let (resource, client) = (validation("aud-test"), validation("public"));
            decode::<serde_json::Value>(&pair.access_token, &key, &resource).expect(key_type);
            decode::<serde_json::Value>(&pair.id_token, &key, &client).expect(key_type);
            assert!(
                decode::<serde_json::Value>(&pair.id_token, &key, &resource).is_err(),
                "an ID token is no access token"
            );
            assert!(decode::<serde_json::Value>(&pair.access_token, &key, &client).is_err(), "nor the other way round");
            for token in [&pair.access_token, &pair.id_token] {
                let signature = URL_SAFE_NO_PAD.decode(token.rsplit_once('.').expect("dot").1).expect("b64");
                let length = match s.alg() {
                    Algorithm::ES256 | Algorithm::EdDSA => 64, // R‖S (RFC 7518 §3.4), not DER; Ed25519
                    _ => s.rsa_bits().expect("bits") / 8,
                };
                assert_eq!(signature.len(), length, "{key_type}");
            }
        }
    }

    #[test]
    fn the_parsed_key_signature_is_the_stock_one_where_deterministic() {
        for key_type in ["rsa-2048", "ed25519"] {
            let s = signer(key_type);
            let pair = s.issue(&user(Uuid::new_v4(), "u", "N", "e@x"), "public", Uuid::new_v4()).expect("signed");
            let (message, signature) = pair.access_token.rsplit_once('.').expect("dot");
            let stock = (jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.signer_factory)(&s.alg(), &s.key)
                .expect("stock signer");
            assert_eq!(signature, URL_SAFE_NO_PAD.encode(stock.try_sign(message.as_bytes()).expect("signed")));
        }
    }

    #[test]
    fn the_session_keeps_its_sid_and_each_pair_gets_fresh_jtis() {
        let s = signer("rsa-2048");
        let subject = user(Uuid::new_v4(), "u", "N", "e@x");
        let family = Uuid::new_v4();
        let a = s.issue_at(&subject, "public", family, 1).expect("a");
        let b = s.issue_at(&subject, "public", family, 1).expect("b");
        let claim = |t: &str, name: &str| b64_json(t.split('.').nth(1).expect("claims"))[name].clone();
        for token in [&a.access_token, &a.id_token, &b.access_token, &b.id_token] {
            assert_eq!(claim(token, "sid"), family.to_string());
        }
        assert_ne!(claim(&a.access_token, "jti"), claim(&b.access_token, "jti"));
        assert_ne!(claim(&a.id_token, "jti"), claim(&b.id_token, "jti"));
    }

    #[test]
    fn a_flattened_inline_key_loads_like_the_file() {
        for key_type in KEY_TYPES {
            let flattened = dev_key_pem(key_type).trim().replace('\n', "\\n");
            let settings =
                Settings::from_lookup(|name| (name == "JWT_PRIVATE_KEY").then(|| flattened.clone())).expect("settings");
            let kid = TokenSigner::from_settings(&settings).expect("flattened key").kid().to_owned();
            assert_eq!(kid, signer(key_type).kid());
        }
    }

    #[test]
    fn a_missing_key_file_is_named() {
        let missing = Settings::from_lookup(|name| (name == "JWT_PRIVATE_KEY_FILE").then(|| "/nonexistent.pem".into()))
            .expect("settings");
        let text = TokenSigner::from_settings(&missing).expect_err("missing file").to_string();
        assert!(text.contains("JWT_PRIVATE_KEY_FILE=/nonexistent.pem"), "{text}");
    }
}
