//! `KeySet`: everything that follows from the keys — the `TokenSigner`, the
//! JWK set and the discovery document — as one immutable value, and `KeyRing`,
//! the one in service, swapped whole by a reload (SIGHUP). A request takes
//! one snapshot (`KeyRing::current`) and signs or answers wholly from it.

use std::sync::{Arc, RwLock};

use bytes::Bytes;
use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use serde::Serialize;

use crate::metrics::KeyReloads;
use crate::settings::Settings;
use crate::signing_key::{KeyError, PublicJwk, public_keys_from_pem};
use crate::token_signer::TokenSigner;

/// The signer and the two documents built from its key and the published keys.
pub struct KeySet {
    pub signer: TokenSigner,
    /// The body of `GET /.well-known/jwks.json`.
    pub jwks: Bytes,
    /// The body of `GET /.well-known/openid-configuration`.
    pub discovery: Bytes,
    /// How many keys the JWK set publishes (the signing key included).
    pub published: usize,
}

impl KeySet {
    /// The signing key of `settings` and the keys of JWT_PUBLIC_KEYS_FILE,
    /// read and checked now (at start-up, and again at each reload).
    pub fn load(settings: &Settings) -> Result<Self, KeyError> {
        let signer = TokenSigner::from_settings(settings)?;
        let bundle = match &settings.public_keys_file {
            None => Vec::new(),
            Some(path) => {
                let problem = |problem: String| KeyError::PublicKeys { path: path.clone(), problem };
                let text = std::fs::read_to_string(path).map_err(|e| problem(format!("cannot be read: {e}")))?;
                public_keys_from_pem(&text).map_err(problem)?
            }
        };
        Ok(Self::new(signer, &bundle, &settings.issuer))
    }

    /// The JWK set is the signing key first, then `bundle` in order, a key
    /// whose `kid` is already in the set left out.
    pub fn new(signer: TokenSigner, bundle: &[PublicJwk], issuer: &str) -> Self {
        let mut keys: Vec<Jwk> = vec![signer.public_jwk().jwk.clone()];
        let mut kids = vec![signer.kid()];
        for key in bundle {
            if !kids.contains(&key.kid.as_str()) {
                kids.push(&key.kid);
                keys.push(key.jwk.clone());
            }
        }
        let published = keys.len();
        let jwks = serde_json::to_vec(&JwkSet { keys }).expect("a JWK set of strings serializes");
        let discovery = serde_json::to_vec(&Discovery::new(issuer, signer.alg())).expect("the document serializes");
        KeySet { signer, jwks: Bytes::from(jwks), discovery: Bytes::from(discovery), published }
    }
}

/// OpenID Connect Discovery 1.0 §3 (and RFC 8414) metadata, exactly the
/// contract's members.
#[derive(Serialize)]
struct Discovery<'a> {
    issuer: &'a str,
    token_endpoint: String,
    jwks_uri: String,
    grant_types_supported: [&'static str; 2],
    revocation_endpoint: String,
    revocation_endpoint_auth_methods_supported: [&'static str; 1],
    /// No authorization endpoint, so no response type; the member is required.
    response_types_supported: [&'static str; 0],
    subject_types_supported: [&'static str; 1],
    id_token_signing_alg_values_supported: [Algorithm; 1],
    token_endpoint_auth_methods_supported: [&'static str; 1],
    claims_supported: [&'static str; 12],
}

impl<'a> Discovery<'a> {
    fn new(issuer: &'a str, alg: Algorithm) -> Self {
        // The URLs join without doubling a `/`; `issuer` stays verbatim.
        let base = issuer.strip_suffix('/').unwrap_or(issuer);
        Discovery {
            issuer,
            token_endpoint: format!("{base}/token"),
            jwks_uri: format!("{base}/.well-known/jwks.json"),
            grant_types_supported: ["password", "refresh_token"],
            revocation_endpoint: format!("{base}/revoke"),
            revocation_endpoint_auth_methods_supported: ["none"],
            response_types_supported: [],
            subject_types_supported: ["public"],
            id_token_signing_alg_values_supported: [alg],
            token_endpoint_auth_methods_supported: ["none"],
            claims_supported: [
                "iss",
                "aud",
                "sub",
                "iat",
                "exp",
                "sid",
                "jti",
                "client_id",
                "name",
                "preferred_username",
                "email",
                "at_hash",
            ],
        }
    }
}

/// The key set in service.
pub struct KeyRing {
    current: RwLock<Arc<KeySet>>,
}

impl KeyRing {
    pub fn new(keys: KeySet) -> Self {
        KeyRing { current: RwLock::new(Arc::new(keys)) }
    }

    /// The key set now; a request keeps this one snapshot to the end. The
    /// lock is held only to clone the `Arc`.
    pub fn current(&self) -> Arc<KeySet> {
        Arc::clone(&self.current.read().unwrap_or_else(|poisoned| poisoned.into_inner()))
    }

    /// Reads the keys of `settings` again. Good: they replace the set in
    /// service in one step, one info line. Bad: the old set stays, one error
    /// line names the problem. Either way counted.
    pub fn reload(&self, settings: &Settings, reloads: &KeyReloads) -> Result<(), KeyError> {
        match KeySet::load(settings) {
            Ok(keys) => {
                tracing::info!(
                    "keys reloaded: kid={} alg={:?} published_keys={}",
                    keys.signer.kid(),
                    keys.signer.alg(),
                    keys.published
                );
                let old = std::mem::replace(
                    &mut *self.current.write().unwrap_or_else(|poisoned| poisoned.into_inner()),
                    Arc::new(keys),
                );
                // The old set (and its parsed key pair) goes once the requests holding it are done.
                drop(old);
                reloads.success();
                Ok(())
            }
            Err(e) => {
                tracing::error!("key reload failed, the keys in service stay: {e}");
                reloads.failure();
                Err(e)
            }
        }
    }
}

/// On each SIGHUP, the signing key and JWT_PUBLIC_KEYS_FILE are read again
/// (on tokio's blocking pool: file reads and key parsing, off the workers)
/// and swapped in if they are good (`KeyRing::reload` logs and counts either
/// outcome). Nothing here stops the process. Installed before the server
/// runs: from then on SIGHUP no longer ends the process (its default action).
pub fn reload_on_sighup(keys: Arc<KeyRing>, settings: Settings, reloads: KeyReloads) -> Result<(), String> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangup = signal(SignalKind::hangup()).map_err(|e| format!("cannot install the SIGHUP handler: {e}"))?;
    let settings = Arc::new(settings);
    tokio::spawn(async move {
        while hangup.recv().await.is_some() {
            let (keys, settings, reloads) = (Arc::clone(&keys), Arc::clone(&settings), reloads.clone());
            if let Err(e) = tokio::task::spawn_blocking(move || keys.reload(&settings, &reloads).is_ok()).await {
                tracing::error!("key reload task failed: {e}");
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metrics;
    use crate::test_vectors::{dev_key_pem, spec_dir, vectors};

    fn set(key_type: &str, bundle: &[PublicJwk], issuer: &str) -> KeySet {
        let signer = TokenSigner::from_pem(&dev_key_pem(key_type), issuer.into(), "aud".into(), 60).expect("key");
        KeySet::new(signer, bundle, issuer)
    }

    fn json(bytes: &Bytes) -> serde_json::Value {
        serde_json::from_slice(bytes).expect("json")
    }

    fn dev_bundle() -> Vec<PublicJwk> {
        let file = spec_dir().join("keys").join("dev-public-keys.pem");
        public_keys_from_pem(&std::fs::read_to_string(file).expect("bundle")).expect("keys")
    }

    #[test]
    fn the_bundle_jwks_is_the_vectors() {
        let v = vectors();
        assert_eq!(v["public_key_bundle"]["signing_key"], "keys/dev-rsa-2048.pem");
        let keys = set("rsa-2048", &dev_bundle(), "http://localhost:8080");
        assert_eq!(json(&keys.jwks), v["public_key_bundle"]["jwks"]);
        assert_eq!(keys.published, 4);
    }

    #[test]
    fn the_signing_key_comes_first_and_only_once() {
        let keys = set("ed25519", &dev_bundle(), "http://localhost:8080");
        let jwks = json(&keys.jwks);
        let kids: Vec<&str> = jwks["keys"].as_array().expect("keys").iter().filter_map(|k| k["kid"].as_str()).collect();
        let v = vectors();
        let bundle: Vec<&str> =
            v["public_key_bundle"]["kids"].as_array().expect("kids").iter().filter_map(|k| k.as_str()).collect();
        assert_eq!(kids, [bundle[3], bundle[0], bundle[1], bundle[2]]);
        let alone = set("p-256", &[], "http://localhost:8080");
        assert_eq!(json(&alone.jwks)["keys"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn the_discovery_document_has_exactly_the_contracts_members() {
        for (issuer, base) in [
            ("https://issuer.conformance.test", "https://issuer.conformance.test"),
            ("https://example.com/auth/", "https://example.com/auth"),
        ] {
            for (key_type, alg) in [("rsa-2048", "RS256"), ("p-256", "ES256"), ("ed25519", "EdDSA")] {
                let doc = json(&set(key_type, &[], issuer).discovery);
                assert_eq!(
                    doc,
                    serde_json::json!({
                        "issuer": issuer,
                        "token_endpoint": format!("{base}/token"),
                        "jwks_uri": format!("{base}/.well-known/jwks.json"),
                        "grant_types_supported": ["password", "refresh_token"],
                        "revocation_endpoint": format!("{base}/revoke"),
                        "revocation_endpoint_auth_methods_supported": ["none"],
                        "response_types_supported": [],
                        "subject_types_supported": ["public"],
                        "id_token_signing_alg_values_supported": [alg],
                        "token_endpoint_auth_methods_supported": ["none"],
                        "claims_supported": ["iss", "aud", "sub", "iat", "exp", "sid", "jti", "client_id", "name",
                            "preferred_username", "email", "at_hash"],
                    })
                );
            }
        }
    }

    /// A private key file and a bundle file of a test's own, to rewrite between reloads.
    struct Files {
        dir: std::path::PathBuf,
    }

    impl Files {
        fn new(name: &str) -> Self {
            let dir = std::env::temp_dir().join(format!("simple-auth-core-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("temp dir");
            Files { dir }
        }
        fn write(&self, name: &str, text: &str) -> String {
            let path = self.dir.join(name);
            std::fs::write(&path, text).expect("write");
            path.display().to_string()
        }
        fn settings(&self) -> Settings {
            let key = self.dir.join("key.pem").display().to_string();
            let bundle = self.dir.join("bundle.pem").display().to_string();
            Settings::from_lookup(|name| match name {
                "JWT_PRIVATE_KEY_FILE" => Some(key.clone()),
                "JWT_PUBLIC_KEYS_FILE" => Some(bundle.clone()),
                _ => None,
            })
            .expect("settings")
        }
    }

    impl Drop for Files {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    fn counts(metrics: &Metrics) -> (String, String) {
        let text = String::from_utf8(metrics.render(deadpool_postgres::Status {
            max_size: 1,
            size: 0,
            available: 0,
            waiting: 0,
        }))
        .expect("utf-8");
        let line = |result: &str| {
            let prefix = format!(r#"simpleauth_key_reloads_total{{result="{result}"}} "#);
            text.lines().find_map(|l| l.strip_prefix(prefix.as_str())).unwrap_or("absent").to_owned()
        };
        (line("success"), line("failure"))
    }

    #[test]
    fn a_good_reload_swaps_everything_and_a_bad_one_keeps_the_old_keys() {
        let files = Files::new("reload");
        let metrics = Metrics::new().expect("metrics");
        files.write("key.pem", &dev_key_pem("rsa-2048"));
        files.write("bundle.pem", "");
        let settings = files.settings();
        let keys = KeyRing::new(KeySet::load(&settings).expect("first keys"));
        assert_eq!(counts(&metrics), ("0".into(), "0".into()));
        let before = keys.current();
        assert_eq!(before.signer.alg(), Algorithm::RS256);

        // The next key published, then switched to.
        let p256 = dev_key_pem("p-256");
        let bundle = std::fs::read_to_string(spec_dir().join("keys").join("dev-public-keys.pem")).expect("bundle");
        let ed_public = pem::encode(&pem::parse_many(bundle).expect("pem")[3]);
        files.write("key.pem", &p256);
        files.write("bundle.pem", &ed_public);
        keys.reload(&settings, &metrics.key_reloads()).expect("good reload");
        let after = keys.current();
        assert_eq!(after.signer.alg(), Algorithm::ES256);
        assert_eq!(after.published, 2);
        assert_eq!(json(&after.discovery)["id_token_signing_alg_values_supported"], serde_json::json!(["ES256"]));
        assert_eq!(json(&after.jwks)["keys"][0]["kid"], after.signer.kid());
        // A snapshot taken before still signs wholly with the old key.
        assert_eq!(before.signer.alg(), Algorithm::RS256);
        assert_eq!(counts(&metrics), ("1".into(), "0".into()));

        // Bad files: a P-384 key, then a bad bundle, then a missing key file.
        let invalid = spec_dir().join("keys").join("invalid");
        let read = |name: &str| std::fs::read_to_string(invalid.join(name)).expect("invalid key");
        for (key, bundle, words) in [
            (read("ec-p384-pkcs8.pem"), ed_public.clone(), "P-384"),
            (p256.clone(), read("public-ec-p384.pem"), "JWT_PUBLIC_KEYS_FILE"),
            (String::new(), ed_public.clone(), "JWT private key"),
        ] {
            files.write("key.pem", &key);
            files.write("bundle.pem", &bundle);
            let err = keys.reload(&settings, &metrics.key_reloads()).expect_err("bad reload");
            assert!(err.to_string().contains(words), "{err}");
            let still = keys.current();
            assert!(Arc::ptr_eq(&still, &after), "the keys in service changed");
        }
        std::fs::remove_file(files.dir.join("key.pem")).expect("remove");
        let err = keys.reload(&settings, &metrics.key_reloads()).expect_err("missing file");
        assert!(err.to_string().contains("JWT_PRIVATE_KEY_FILE"), "{err}");
        assert_eq!(counts(&metrics), ("1".into(), "4".into()));
        assert!(Arc::ptr_eq(&keys.current(), &after));
    }
}
