//! jsonwebtoken's aws-lc-rs `CryptoProvider`, with RS256, ES256 and EdDSA
//! signers that keep the key pair parsed once.
//!
//! The stock aws-lc-rs signers parse the DER key again for every signature
//! (`RsaKeyPair`, `EcdsaKeyPair`, `Ed25519KeyPair::from_pkcs8`), which halves
//! the RSA signing throughput and costs more than the signature itself for
//! Ed25519. jsonwebtoken's `signer_factory` is a plain function, so the parsed
//! key pairs are found again in a process-wide list, by the DER bytes of the
//! `EncodingKey` it is handed. The list holds them weakly: the `TokenSigner`
//! that registered a key pair owns it, so a key retired by a reload (SIGHUP)
//! leaves the list once the last request signing with it is done. Everything
//! else (verification, JWK helpers, digests) is the stock provider's.

use std::sync::{Arc, LazyLock, OnceLock, RwLock, Weak};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{EcdsaKeyPair, Ed25519KeyPair, RSA_PKCS1_SHA256, RsaKeyPair};
use jsonwebtoken::crypto::{CryptoProvider, JwtSigner};
use jsonwebtoken::{Algorithm, EncodingKey};

/// A signing key pair, parsed: one per algorithm the service signs with.
pub enum ParsedKeyPair {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256(RsaKeyPair),
    /// ECDSA P-256 with SHA-256, parsed for `ECDSA_P256_SHA256_FIXED_SIGNING`
    /// (the 64-byte `R‖S` signature of RFC 7518 §3.4, not DER).
    Es256(EcdsaKeyPair),
    /// Ed25519 (RFC 8037).
    EdDsa(Ed25519KeyPair),
}

impl ParsedKeyPair {
    pub fn algorithm(&self) -> Algorithm {
        match self {
            ParsedKeyPair::Rs256(_) => Algorithm::RS256,
            ParsedKeyPair::Es256(_) => Algorithm::ES256,
            ParsedKeyPair::EdDsa(_) => Algorithm::EdDSA,
        }
    }

    /// The JWS signature of `msg`.
    pub fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, aws_lc_rs::error::Unspecified> {
        match self {
            ParsedKeyPair::Rs256(pair) => {
                let mut signature = vec![0; pair.public_modulus_len()];
                pair.sign(&RSA_PKCS1_SHA256, &SystemRandom::new(), msg, &mut signature)?;
                Ok(signature)
            }
            ParsedKeyPair::Es256(pair) => Ok(pair.sign(&SystemRandom::new(), msg)?.as_ref().to_vec()),
            ParsedKeyPair::EdDsa(pair) => Ok(pair.sign(msg).as_ref().to_vec()),
        }
    }
}

/// The registered key pairs, by the DER bytes of their `EncodingKey`. One live
/// entry in the service (two for a moment after a reload); tests add more.
static PARSED_KEYS: RwLock<Vec<(Vec<u8>, Weak<ParsedKeyPair>)>> = RwLock::new(Vec::new());

static PROVIDER: LazyLock<CryptoProvider> = LazyLock::new(|| CryptoProvider {
    signer_factory: parsed_key_signer,
    ..jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.clone()
});

/// Installs this provider as jsonwebtoken's default, once per process; true
/// if it is the default. Must run before anything asks jsonwebtoken for its
/// default provider (`encode`, `decode`, a JWK thumbprint), which fixes the
/// stock one; signing then takes the stock (slower, still correct) path.
pub fn install() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| PROVIDER.install_default().is_ok())
}

/// Remembers `key_pair` as the parsed form of `key` (and installs the
/// provider). The caller keeps the returned handle as long as it signs with
/// `key`; the entry lapses when the last handle is dropped.
pub fn register(key: &EncodingKey, key_pair: ParsedKeyPair) -> Arc<ParsedKeyPair> {
    install();
    let mut keys = PARSED_KEYS.write().unwrap_or_else(|poisoned| poisoned.into_inner());
    keys.retain(|(_, pair)| pair.strong_count() > 0);
    if let Some(live) = keys.iter().find(|(der, _)| der == key.as_bytes()).and_then(|(_, pair)| pair.upgrade()) {
        return live;
    }
    let pair = Arc::new(key_pair);
    keys.push((key.as_bytes().to_vec(), Arc::downgrade(&pair)));
    pair
}

fn parsed_key_signer(alg: &Algorithm, key: &EncodingKey) -> jsonwebtoken::errors::Result<Box<dyn JwtSigner>> {
    let found = {
        let keys = PARSED_KEYS.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        keys.iter().find(|(der, _)| der.as_slice() == key.as_bytes()).and_then(|(_, pair)| pair.upgrade())
    };
    match found {
        Some(pair) if pair.algorithm() == *alg => Ok(Box::new(ParsedKeySigner(pair))),
        _ => (jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.signer_factory)(alg, key),
    }
}

struct ParsedKeySigner(Arc<ParsedKeyPair>);

impl jsonwebtoken::signature::Signer<Vec<u8>> for ParsedKeySigner {
    fn try_sign(&self, msg: &[u8]) -> Result<Vec<u8>, jsonwebtoken::signature::Error> {
        self.0.sign(msg).map_err(jsonwebtoken::signature::Error::from_source)
    }
}

impl JwtSigner for ParsedKeySigner {
    fn algorithm(&self) -> Algorithm {
        self.0.algorithm()
    }
}

/// Seeds AWS-LC's random generator on a thread of its own.
///
/// The first random bytes a process asks AWS-LC for (RSA blinding or the
/// ECDSA nonce, in the first signature) seed its generator from CPU jitter,
/// ~30 ms of CPU once per process. Started before the server binds, the
/// seeding overlaps binding and the pool's first connection instead of
/// following them inside the first request. Nothing is skipped: a request that
/// comes earlier waits for the same one-time seeding (AWS-LC runs it once).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signing_key::SigningKey;
    use crate::test_vectors::dev_key_pem;
    use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, KeyPair as _};

    fn der(key_type: &str) -> Vec<u8> {
        pem::parse(dev_key_pem(key_type)).expect("pem").into_contents()
    }

    #[test]
    fn the_parsed_signers_give_the_stock_signatures() {
        // RSA PKCS#1 v1.5 and Ed25519 are deterministic: both paths must give the same bytes.
        for key_type in ["rsa-2048", "ed25519"] {
            let SigningKey { encoding_key: key, key_pair, public, .. } =
                SigningKey::from_pem(&dev_key_pem(key_type)).expect("dev key");
            let _held = register(&key, key_pair);
            let message = b"eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0";
            let parsed = parsed_key_signer(&public.alg, &key).expect("parsed signer");
            let stock = (jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.signer_factory)(&public.alg, &key)
                .expect("stock signer");
            assert_eq!(
                parsed.try_sign(message).expect("signed"),
                stock.try_sign(message).expect("signed"),
                "{key_type}"
            );
        }
    }

    #[test]
    fn the_parsed_es256_signer_gives_64_byte_signatures_that_verify() {
        // ECDSA is randomised: check the form and the signature instead.
        let der = der("p-256");
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der).expect("parsed");
        let public = pair.public_key().as_ref().to_vec();
        let key = EncodingKey::from_ec_der(&der);
        let _held = register(&key, ParsedKeyPair::Es256(pair));
        let message = b"eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0";
        let signature = parsed_key_signer(&Algorithm::ES256, &key).expect("signer").try_sign(message).expect("signed");
        assert_eq!(signature.len(), 64);
        aws_lc_rs::signature::UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &public)
            .verify(message, &signature)
            .expect("verifies");
    }

    #[test]
    fn a_dropped_key_pair_leaves_the_list() {
        let der = der("ed25519");
        // A DER no other test registers: the key pair with a trailing byte.
        let mut unique = der.clone();
        unique.push(0);
        let key = EncodingKey::from_ed_der(&unique);
        let held = register(&key, ParsedKeyPair::EdDsa(Ed25519KeyPair::from_pkcs8(&der).expect("parsed")));
        let again = register(&key, ParsedKeyPair::EdDsa(Ed25519KeyPair::from_pkcs8(&der).expect("parsed")));
        assert!(Arc::ptr_eq(&held, &again), "the same key is registered once");
        drop((held, again));
        let keys = PARSED_KEYS.read().expect("lock");
        assert!(keys.iter().filter(|(known, _)| *known == unique).all(|(_, pair)| pair.upgrade().is_none()));
    }
}
