//! jsonwebtoken's aws-lc-rs `CryptoProvider`, with an RS256 signer that keeps
//! the key pair parsed once at start-up.
//!
//! The stock aws-lc-rs signer parses the DER key again for every signature,
//! which halves the signing throughput. jsonwebtoken's `signer_factory` is a
//! plain function, so the parsed key pairs are found again in a process-wide
//! list, by the DER bytes of the `EncodingKey` it is handed. Everything else
//! (verification, JWK helpers, digests) is the stock provider's.

use std::sync::{Arc, LazyLock, Once, RwLock};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use jsonwebtoken::crypto::{CryptoProvider, JwtSigner};
use jsonwebtoken::{Algorithm, EncodingKey};

/// One entry in the service; tests may add more.
static PARSED_KEYS: RwLock<Vec<(Vec<u8>, Arc<RsaKeyPair>)>> = RwLock::new(Vec::new());

static PROVIDER: LazyLock<CryptoProvider> = LazyLock::new(|| CryptoProvider {
    signer_factory: parsed_key_signer,
    ..jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.clone()
});

/// Installs the provider (once per process) and remembers `key_pair` as the
/// parsed form of `key`. Must run before anything asks jsonwebtoken for its
/// default provider, which would fix the stock one.
pub fn register(key: &EncodingKey, key_pair: RsaKeyPair) {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // Fails only if a provider was already chosen; signing then takes the
        // stock (slower, still correct) path.
        let _ = PROVIDER.install_default();
    });
    let mut keys = PARSED_KEYS.write().unwrap_or_else(|poisoned| poisoned.into_inner());
    if !keys.iter().any(|(known, _)| known == key.as_bytes()) {
        keys.push((key.as_bytes().to_vec(), Arc::new(key_pair)));
    }
}

fn parsed_key_signer(alg: &Algorithm, key: &EncodingKey) -> jsonwebtoken::errors::Result<Box<dyn JwtSigner>> {
    if *alg == Algorithm::RS256 {
        let keys = PARSED_KEYS.read().unwrap_or_else(|poisoned| poisoned.into_inner());
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

/// Seeds AWS-LC's random generator on a thread of its own.
///
/// The first random bytes a process asks AWS-LC for (RSA blinding, in the
/// first signature) seed its generator from CPU jitter, ~30 ms of CPU once
/// per process. Started before the server binds, the seeding overlaps binding
/// and the pool's first connection instead of following them inside the first
/// request. Nothing is skipped: a request that comes earlier waits for the
/// same one-time seeding (AWS-LC runs it once).
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
    use crate::test_vectors::dev_key_pem;

    #[test]
    fn the_parsed_key_signer_gives_the_stock_signature() {
        // RSA PKCS#1 v1.5 is deterministic: both paths must give the same bytes.
        let pem = dev_key_pem(2048);
        let key = EncodingKey::from_rsa_pem(pem.trim().as_bytes()).expect("key");
        let key_pair = RsaKeyPair::from_der(key.as_bytes()).expect("parsed");
        assert_eq!(key_pair.public_modulus_len(), 256);
        register(&key, key_pair);
        let message = b"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0";
        let parsed = parsed_key_signer(&Algorithm::RS256, &key).expect("parsed signer");
        let stock = (jsonwebtoken::crypto::aws_lc::DEFAULT_PROVIDER.signer_factory)(&Algorithm::RS256, &key)
            .expect("stock signer");
        assert_eq!(parsed.try_sign(message).expect("signed"), stock.try_sign(message).expect("signed"));
    }
}
