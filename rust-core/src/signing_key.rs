//! The keys: the signing key (a PKCS#8 PEM private key) and the published
//! verification keys (`BEGIN PUBLIC KEY` blocks), each as its JWK.
//!
//! The key decides the algorithm: RSA of at least 2048 bits → RS256, EC
//! P-256 → ES256, Ed25519 → EdDSA. Every key is parsed by aws-lc-rs (the
//! library that signs); the PKCS#8 / SPKI algorithm identifier is read first
//! (`spki`), so a refused key is named (`an EC key on P-384`, `Ed448`) rather
//! than reported as a parse failure of each accepted type in turn.

use aws_lc_rs::signature::{
    ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, ED25519, EcdsaKeyPair, Ed25519KeyPair, KeyPair as _,
    ParsedPublicKey, RsaKeyPair, RsaPublicKeyComponents,
};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{
    AlgorithmParameters, CommonParameters, EllipticCurve, EllipticCurveKeyParameters, EllipticCurveKeyType, Jwk,
    OctetKeyPairParameters, OctetKeyPairType, PublicKeyUse, RSAKeyParameters, RSAKeyType, ThumbprintHash,
};
use jsonwebtoken::{Algorithm, EncodingKey};
use spki::der::asn1::{OctetStringRef, UintRef};
use spki::der::{Decode as _, Reader as _, SliceReader};
use spki::{AlgorithmIdentifierRef, ObjectIdentifier, SubjectPublicKeyInfoRef};

use crate::parsed_key_provider::{self, ParsedKeyPair};

pub const MIN_RSA_BITS: usize = 2048;

const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const EC_PUBLIC_KEY: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
const PRIME256V1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const ED25519_OID: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");

/// What the accepted keys are, for the refusals.
const ACCEPTED: &str = "accepted are RSA of at least 2048 bits (RS256), EC P-256 (ES256) and Ed25519 (EdDSA)";

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
    #[error(
        "JWT private key is SEC 1 (BEGIN EC PRIVATE KEY), which is refused: convert it with `openssl pkcs8 -topk8 -nocrypt -in key.pem -out key-pkcs8.pem`"
    )]
    Sec1,
    #[error("JWT private key must be a PKCS#8 PEM (BEGIN PRIVATE KEY), found BEGIN {0}")]
    WrongPemLabel(String),
    #[error("JWT private key is {0}, which is refused; {ACCEPTED}")]
    Unsupported(String),
    #[error("JWT private key is not a usable {kind} key (PKCS#8): {reason}")]
    Malformed { kind: &'static str, reason: String },
    #[error("JWT private key is RSA of {0} bits; at least 2048 are required")]
    TooSmall(usize),
    #[error("JWT_PUBLIC_KEYS_FILE={path}: {problem}")]
    PublicKeys { path: String, problem: String },
}

/// A public key as published: its algorithm, RFC 7638 thumbprint and JWK
/// (`kty`, `use`, `alg`, `kid` and the key's own members, nothing else).
#[derive(Debug, Clone)]
pub struct PublicJwk {
    pub alg: Algorithm,
    pub kid: String,
    pub jwk: Jwk,
}

impl PublicJwk {
    fn new(alg: Algorithm, algorithm: AlgorithmParameters) -> Result<Self, String> {
        // The thumbprint asks jsonwebtoken for its provider, which fixes it: ours first.
        parsed_key_provider::install();
        let mut jwk = Jwk {
            common: CommonParameters {
                public_key_use: Some(PublicKeyUse::Signature),
                key_algorithm: Some(alg.into()),
                ..CommonParameters::default()
            },
            algorithm,
        };
        let kid = jwk.thumbprint(ThumbprintHash::SHA256).map_err(|e| e.to_string())?;
        jwk.common.key_id = Some(kid.clone());
        Ok(PublicJwk { alg, kid, jwk })
    }

    fn rsa(n: &[u8], e: &[u8]) -> Result<Self, String> {
        let params = RSAKeyParameters { key_type: RSAKeyType::RSA, n: b64(n), e: b64(e) };
        Self::new(Algorithm::RS256, AlgorithmParameters::RSA(params))
    }

    /// `point`: the uncompressed SEC 1 point, `04 ‖ x ‖ y`.
    fn p256(point: &[u8]) -> Result<Self, String> {
        let (0x04, coordinates) = point.split_first().map(|(tag, rest)| (*tag, rest)).unwrap_or((0, &[])) else {
            return Err("the EC point is not in uncompressed form".into());
        };
        if coordinates.len() != 64 {
            return Err("the EC point is not a P-256 point".into());
        }
        let (x, y) = coordinates.split_at(32);
        let params = EllipticCurveKeyParameters {
            key_type: EllipticCurveKeyType::EC,
            curve: EllipticCurve::P256,
            x: b64(x),
            y: b64(y),
        };
        Self::new(Algorithm::ES256, AlgorithmParameters::EllipticCurve(params))
    }

    fn ed25519(x: &[u8]) -> Result<Self, String> {
        let params = OctetKeyPairParameters {
            key_type: OctetKeyPairType::OctetKeyPair,
            curve: EllipticCurve::Ed25519,
            x: b64(x),
        };
        Self::new(Algorithm::EdDSA, AlgorithmParameters::OctetKeyPair(params))
    }
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// The signing key: parsed once (for `parsed_key_provider`), as jsonwebtoken's
/// `EncodingKey`, and its public JWK.
pub struct SigningKey {
    pub encoding_key: EncodingKey,
    pub key_pair: ParsedKeyPair,
    pub public: PublicJwk,
    /// The RSA modulus size; `None` for the curve keys.
    pub rsa_bits: Option<usize>,
}

impl SigningKey {
    /// A PKCS#8 PEM private key of one of the accepted types.
    pub fn from_pem(pem_text: &str) -> Result<Self, KeyError> {
        let block = pem::parse(pem_text.trim()).map_err(|e| KeyError::NotPem(e.to_string()))?;
        match block.tag() {
            "PRIVATE KEY" => {}
            "RSA PRIVATE KEY" => return Err(KeyError::Pkcs1),
            "EC PRIVATE KEY" => return Err(KeyError::Sec1),
            other => return Err(KeyError::WrongPemLabel(other.to_owned())),
        }
        let der = block.contents();
        let malformed = |kind: &'static str| move |reason: String| KeyError::Malformed { kind, reason };
        let (algorithm, private_key) = pkcs8_parts(der).map_err(|e| malformed("PKCS#8")(e.to_string()))?;
        match algorithm {
            (RSA_ENCRYPTION, _) => {
                if let Some(bits) = rsa_modulus_bits(private_key).filter(|bits| *bits < MIN_RSA_BITS) {
                    return Err(KeyError::TooSmall(bits));
                }
                let pair = RsaKeyPair::from_pkcs8(der).map_err(|e| malformed("RSA")(e.to_string()))?;
                let bits = pair.public_modulus_len() * 8;
                if bits < MIN_RSA_BITS {
                    return Err(KeyError::TooSmall(bits));
                }
                let components = RsaPublicKeyComponents::<Vec<u8>>::from(pair.public_key());
                let public = PublicJwk::rsa(&components.n, &components.e).map_err(malformed("RSA"))?;
                // jsonwebtoken's RSA keys are the inner PKCS#1 `RSAPrivateKey` (its
                // stock signer and JWK helpers parse that); the curve keys stay PKCS#8.
                let encoding_key = EncodingKey::from_rsa_der(private_key);
                Ok(SigningKey { encoding_key, key_pair: ParsedKeyPair::Rs256(pair), public, rsa_bits: Some(bits) })
            }
            (EC_PUBLIC_KEY, Some(PRIME256V1)) => {
                let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der)
                    .map_err(|e| malformed("EC P-256")(e.to_string()))?;
                let public = PublicJwk::p256(pair.public_key().as_ref()).map_err(malformed("EC P-256"))?;
                let encoding_key = EncodingKey::from_ec_der(der);
                Ok(SigningKey { encoding_key, key_pair: ParsedKeyPair::Es256(pair), public, rsa_bits: None })
            }
            (ED25519_OID, _) => {
                let pair = Ed25519KeyPair::from_pkcs8(der).map_err(|e| malformed("Ed25519")(e.to_string()))?;
                let public = PublicJwk::ed25519(pair.public_key().as_ref()).map_err(malformed("Ed25519"))?;
                let encoding_key = EncodingKey::from_ed_der(der);
                Ok(SigningKey { encoding_key, key_pair: ParsedKeyPair::EdDsa(pair), public, rsa_bits: None })
            }
            (oid, parameters) => Err(KeyError::Unsupported(key_type_name(oid, parameters))),
        }
    }
}

/// The keys of a `JWT_PUBLIC_KEYS_FILE` bundle, in file order: every PEM block
/// must be a `PUBLIC KEY` (SPKI) of an accepted type; text outside the blocks
/// is ignored, and a file without blocks publishes nothing. The error names
/// the block (1-based) and its problem.
pub fn public_keys_from_pem(bundle: &str) -> Result<Vec<PublicJwk>, String> {
    let blocks = pem::parse_many(bundle).map_err(|e| format!("not a PEM bundle: {e}"))?;
    blocks
        .iter()
        .enumerate()
        .map(|(i, block)| {
            let number = i + 1;
            if block.tag() != "PUBLIC KEY" {
                return Err(format!("block {number} is BEGIN {}, not BEGIN PUBLIC KEY", block.tag()));
            }
            public_key_from_spki(block.contents()).map_err(|problem| format!("block {number}: {problem}"))
        })
        .collect()
}

fn public_key_from_spki(der: &[u8]) -> Result<PublicJwk, String> {
    let spki = SubjectPublicKeyInfoRef::from_der(der).map_err(|e| format!("not a public key (SPKI): {e}"))?;
    let algorithm = spki.algorithm.oids().map_err(|e| format!("not a public key (SPKI): {e}"))?;
    let key = spki.subject_public_key.as_bytes().ok_or("the key's bit string has unused bits")?;
    match algorithm {
        (RSA_ENCRYPTION, _) => {
            let public = aws_lc_rs::rsa::PublicKey::from_der(der).map_err(|e| format!("not a usable RSA key: {e}"))?;
            let components = RsaPublicKeyComponents::<Vec<u8>>::from(&public);
            let bits = components.n.len() * 8 - components.n.first().map_or(0, |b| b.leading_zeros() as usize);
            if bits < MIN_RSA_BITS {
                return Err(format!("an RSA key of {bits} bits; at least 2048 are required"));
            }
            PublicJwk::rsa(&components.n, &components.e)
        }
        (EC_PUBLIC_KEY, Some(PRIME256V1)) => {
            ParsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, der).map_err(|e| format!("not a usable P-256 key: {e}"))?;
            PublicJwk::p256(key)
        }
        (ED25519_OID, _) => {
            ParsedPublicKey::new(&ED25519, der).map_err(|e| format!("not a usable Ed25519 key: {e}"))?;
            PublicJwk::ed25519(key)
        }
        (oid, parameters) => Err(format!("{}, which is refused; {ACCEPTED}", key_type_name(oid, parameters))),
    }
}

type AlgorithmOids = (ObjectIdentifier, Option<ObjectIdentifier>);

/// The algorithm identifier and the private key octets of a PKCS#8
/// `PrivateKeyInfo` (RFC 5208 / 5958): `SEQUENCE { version INTEGER,
/// privateKeyAlgorithm AlgorithmIdentifier, privateKey OCTET STRING, ... }`.
fn pkcs8_parts(der: &[u8]) -> spki::der::Result<(AlgorithmOids, &[u8])> {
    let mut reader = SliceReader::new(der)?;
    reader.sequence(|body| {
        let _version = u8::decode(body)?;
        let algorithm = AlgorithmIdentifierRef::decode(body)?.oids()?;
        let private_key = OctetStringRef::decode(body)?.as_bytes();
        body.read_slice(body.remaining_len())?;
        Ok((algorithm, private_key))
    })
}

/// The modulus size of a PKCS#1 `RSAPrivateKey` (`SEQUENCE { version, modulus, ... }`),
/// to name a small key (aws-lc-rs refuses it without saying its size).
fn rsa_modulus_bits(pkcs1: &[u8]) -> Option<usize> {
    let mut reader = SliceReader::new(pkcs1).ok()?;
    let modulus: spki::der::Result<&[u8]> = reader.sequence(|body| {
        let _version = u8::decode(body)?;
        let modulus = UintRef::decode(body)?.as_bytes();
        body.read_slice(body.remaining_len())?;
        Ok(modulus)
    });
    let modulus = modulus.ok()?;
    Some(modulus.len() * 8 - modulus.first().map_or(0, |b| b.leading_zeros() as usize))
}

/// A refused key type, in words.
fn key_type_name(oid: ObjectIdentifier, parameters: Option<ObjectIdentifier>) -> String {
    let curve = |oid: Option<ObjectIdentifier>| match oid.map(|o| o.to_string()).as_deref() {
        Some("1.3.132.0.34") => "P-384".to_owned(),
        Some("1.3.132.0.35") => "P-521".to_owned(),
        Some("1.3.132.0.10") => "secp256k1".to_owned(),
        Some(other) => format!("the curve {other}"),
        None => "an unnamed curve".to_owned(),
    };
    match oid.to_string().as_str() {
        "1.2.840.10045.2.1" => format!("an EC key on {}", curve(parameters)),
        "1.3.101.113" => "an Ed448 key".to_owned(),
        "1.3.101.110" | "1.3.101.111" => "an X25519/X448 (key agreement) key".to_owned(),
        "1.2.840.10040.4.1" => "a DSA key".to_owned(),
        "1.2.840.113549.1.1.10" => "an RSASSA-PSS key".to_owned(),
        other => format!("a key of algorithm {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_vectors::{dev_key_pem, key_entries, spec_dir, vectors};

    #[test]
    fn every_dev_key_has_the_vectors_alg_kid_and_jwk() {
        for entry in key_entries() {
            let key_type = entry["type"].as_str().expect("type");
            let key = SigningKey::from_pem(&dev_key_pem(key_type)).expect(key_type);
            assert_eq!(key.public.kid, entry["kid"].as_str().expect("kid"), "{key_type}");
            assert_eq!(key.public.alg, entry["alg"].as_str().expect("alg").parse().expect("an alg"), "{key_type}");
            assert_eq!(key.key_pair.algorithm(), key.public.alg, "{key_type}");
            assert_eq!(serde_json::to_value(&key.public.jwk).expect("json"), entry["jwk"], "{key_type}");
            assert_eq!(key.rsa_bits.map(|b| b as u64), entry["bits"].as_u64(), "{key_type}");
        }
    }

    #[test]
    fn thumbprint_inputs_hash_to_the_kids() {
        use sha2::{Digest, Sha256};
        for entry in key_entries() {
            let input = entry["thumbprint_input"].as_str().expect("input");
            assert_eq!(URL_SAFE_NO_PAD.encode(Sha256::digest(input.as_bytes())), entry["kid"].as_str().expect("kid"));
        }
    }

    #[test]
    fn the_dev_bundle_gives_the_four_public_jwks() {
        let v = vectors();
        let bundle = &v["public_key_bundle"];
        let text = std::fs::read_to_string(spec_dir().join(bundle["file"].as_str().expect("file"))).expect("bundle");
        let keys = public_keys_from_pem(&text).expect("bundle");
        let kids: Vec<&str> = keys.iter().map(|k| k.kid.as_str()).collect();
        let expected: Vec<&str> = bundle["kids"].as_array().expect("kids").iter().filter_map(|k| k.as_str()).collect();
        assert_eq!(kids, expected);
        for (key, entry) in keys.iter().zip(key_entries()) {
            assert_eq!(serde_json::to_value(&key.jwk).expect("json"), entry["jwk"]);
        }
        assert!(public_keys_from_pem("no blocks here\n").expect("empty").is_empty());
    }

    #[test]
    fn invalid_private_keys_are_refused_and_named() {
        let invalid = spec_dir().join("keys").join("invalid");
        for (file, words) in [
            ("rsa-2048-pkcs1.pem", &["PKCS#1"][..]),
            ("rsa-1024-pkcs8.pem", &["RSA", "2048"]),
            ("ec-p256-sec1.pem", &["SEC 1", "EC PRIVATE KEY"]),
            ("ec-p384-pkcs8.pem", &["P-384", "P-256"]),
            ("ec-secp256k1-pkcs8.pem", &["secp256k1", "P-256"]),
            ("ed448-pkcs8.pem", &["Ed448", "Ed25519"]),
            ("public-ec-p384.pem", &["BEGIN PUBLIC KEY"]),
        ] {
            let pem = std::fs::read_to_string(invalid.join(file)).expect("invalid key file");
            let Err(err) = SigningKey::from_pem(&pem) else { panic!("{file} accepted") };
            let text = err.to_string();
            assert!(text.contains("key") && !text.contains('\n'), "{file}: {text}");
            for word in words {
                assert!(text.contains(word), "{file}: {text} does not name {word}");
            }
        }
        let garbage = "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n";
        assert!(SigningKey::from_pem(garbage).is_err());
        assert!(SigningKey::from_pem("").is_err());
    }

    #[test]
    fn invalid_public_keys_are_refused_and_named() {
        let invalid = spec_dir().join("keys").join("invalid");
        let p384 = std::fs::read_to_string(invalid.join("public-ec-p384.pem")).expect("file");
        let good = std::fs::read_to_string(spec_dir().join("keys").join("dev-public-keys.pem")).expect("bundle");
        let err = public_keys_from_pem(&format!("{good}{p384}")).expect_err("P-384");
        assert!(err.contains("block 5") && err.contains("P-384"), "{err}");
        let private = dev_key_pem("ed25519");
        let err = public_keys_from_pem(&private).expect_err("a private key");
        assert!(err.contains("block 1") && err.contains("BEGIN PRIVATE KEY"), "{err}");
        let garbage = "-----BEGIN PUBLIC KEY-----\nbm9wZQ==\n-----END PUBLIC KEY-----\n";
        assert!(public_keys_from_pem(garbage).expect_err("garbage").contains("block 1"));
    }
}
