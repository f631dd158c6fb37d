//! Verification of the two stored password schemes of the `users` table:
//! `$argon2id$v=19$m=..,t=..,p=..$salt$hash` and the legacy
//! `$hmac-sha256$<salt>$<hash>` of the original simple-auth service.
//!
//! Comparisons are constant-time. A stored string that fits neither scheme
//! is a data error: the login fails with `invalid_grant`, never a 500.

use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use argon2::password_hash::{self, PasswordHash};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use tokio::sync::Semaphore;
use uuid::Uuid;

use crate::errors::ApiError;
use crate::metrics::PasswordChecks;

/// What a verification found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Match,
    Mismatch,
    /// The stored string is not a usable hash; the reason never contains it.
    Unusable(&'static str),
}

const ARGON2ID_PREFIX: &str = "$argon2id$";
const LEGACY_PREFIX: &str = "$hmac-sha256$";

/// The scheme a verification is counted under: the one the stored string's
/// prefix names, `Dummy` for the unknown-user equaliser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Argon2id,
    HmacSha256,
    Dummy,
    Unknown,
}

impl Scheme {
    pub fn of(stored: &str) -> Scheme {
        if stored.starts_with(ARGON2ID_PREFIX) {
            Scheme::Argon2id
        } else if stored.starts_with(LEGACY_PREFIX) {
            Scheme::HmacSha256
        } else {
            Scheme::Unknown
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Scheme::Argon2id => "argon2id",
            Scheme::HmacSha256 => "hmac-sha256",
            Scheme::Dummy => "dummy",
            Scheme::Unknown => "unknown",
        }
    }
}

/// Verified for unknown users so that they cost what a wrong password of an
/// argon2id user costs (m=19456, t=2, p=1: the parameters of new users).
/// Salt and output are random bytes: no password matches it.
pub const DUMMY_ARGON2ID_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$MfppAupOtUh4flw0geWCMw$efgXc1L+mHAV1KIedXQgQmb0jnqCQ7Li1xYr9T0OJlA";

/// True when verifying against `stored` costs real CPU time (tens of ms),
/// so it must not run on the async executor.
pub fn is_costly(stored: &str) -> bool {
    stored.starts_with(ARGON2ID_PREFIX)
}

/// Verifies `password` against the stored PHC-style string.
pub fn verify(password: &[u8], stored: &str) -> Outcome {
    if stored.starts_with(ARGON2ID_PREFIX) {
        verify_argon2id(password, stored)
    } else if let Some(rest) = stored.strip_prefix(LEGACY_PREFIX) {
        verify_legacy(password, rest)
    } else if stored.is_empty() {
        Outcome::Unusable("empty password hash")
    } else {
        Outcome::Unusable("unknown password hash scheme")
    }
}

fn verify_argon2id(password: &[u8], stored: &str) -> Outcome {
    let Ok(hash) = PasswordHash::new(stored) else {
        return Outcome::Unusable("malformed argon2id hash");
    };
    // Only what the contract names: argon2id, version 19, exactly m, t and p.
    if hash.algorithm.as_str() != "argon2id" || hash.version != Some(19) {
        return Outcome::Unusable("argon2id hash with an unsupported version");
    }
    let names: Vec<&str> = hash.params.iter().map(|(name, _)| name.as_str()).collect();
    if names.len() != 3 || !["m", "t", "p"].iter().all(|n| names.contains(n)) {
        return Outcome::Unusable("argon2id hash without exactly m, t and p");
    }
    let (Some(salt), Some(expected)) = (&hash.salt, &hash.hash) else {
        return Outcome::Unusable("argon2id hash without salt or output");
    };
    // m, t, p and the output length come from the string itself.
    let Ok(params) = Params::try_from(&hash) else {
        return Outcome::Unusable("argon2id hash with invalid parameters");
    };
    if params.m_cost() > MAX_M_COST_KIB {
        return Outcome::Unusable("argon2id hash with a memory cost over 256 MiB");
    }
    let mut salt_buf = [0u8; 64];
    let Ok(salt) = salt.decode_b64(&mut salt_buf) else {
        return Outcome::Unusable("argon2id hash with an invalid salt");
    };
    let block_count = params.block_count();
    let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
    let mut computed = [0u8; password_hash::Output::MAX_LENGTH];
    let computed = &mut computed[..expected.len()];
    let filled =
        with_blocks(block_count, |blocks| argon2.hash_password_into_with_memory(password, salt, computed, blocks));
    if filled.is_err() {
        return Outcome::Unusable("argon2id hash with unusable parameters");
    }
    // Output's equality is constant-time.
    match password_hash::Output::new(computed) {
        Ok(computed) if computed == *expected => Outcome::Match,
        Ok(_) => Outcome::Mismatch,
        Err(_) => Outcome::Unusable("argon2id hash with an unusable output length"),
    }
}

/// A stored hash asking for more memory than this is treated as unusable
/// rather than allowed to take the process's memory.
const MAX_M_COST_KIB: u32 = 256 * 1024;
/// Working memory kept by a thread between verifications: enough for the
/// default parameters (19 MiB); anything larger is freed after use.
const RETAINED_BLOCKS: usize = 32 * 1024;

thread_local! {
    /// argon2's working memory, reused by each blocking thread: allocating
    /// 19 MiB per verification left glibc's arenas holding several times
    /// that in RSS under load, and costs page faults besides.
    static BLOCKS: RefCell<Vec<Block>> = const { RefCell::new(Vec::new()) };
}

fn with_blocks<R>(count: usize, work: impl FnOnce(&mut [Block]) -> R) -> R {
    BLOCKS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut blocks) => {
            if blocks.len() < count {
                blocks.resize(count, Block::default());
            }
            let result = work(&mut blocks[..count]);
            if blocks.len() > RETAINED_BLOCKS {
                *blocks = Vec::new();
            }
            result
        }
        Err(_) => work(&mut vec![Block::default(); count]),
    })
}

fn verify_legacy(password: &[u8], rest: &str) -> Outcome {
    let mut parts = rest.split('$');
    let (Some(salt_b64), Some(hash_b64), None) = (parts.next(), parts.next(), parts.next()) else {
        return Outcome::Unusable("legacy hash is not $hmac-sha256$<salt>$<hash>");
    };
    let (Ok(salt), Ok(expected)) = (STANDARD.decode(salt_b64), STANDARD.decode(hash_b64)) else {
        return Outcome::Unusable("legacy hash with invalid base64");
    };
    if salt.is_empty() || expected.len() != 32 {
        return Outcome::Unusable("legacy hash with an empty salt or an output that is not 32 bytes");
    }
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&salt) else {
        return Outcome::Unusable("legacy hash with an unusable salt");
    };
    mac.update(password);
    // verify_slice compares in constant time.
    match mac.verify_slice(&expected) {
        Ok(()) => Outcome::Match,
        Err(_) => Outcome::Mismatch,
    }
}

/// Runs verifications off the async executor, at most `limit` argon2id runs
/// at a time across all workers: each one holds 19 MiB and a core for
/// ~20-50 ms, so more at once only adds memory and queueing, not throughput.
#[derive(Clone)]
pub struct PasswordVerifier {
    permits: Arc<Semaphore>,
    checks: PasswordChecks,
}

impl PasswordVerifier {
    pub fn new(limit: usize, checks: PasswordChecks) -> Self {
        PasswordVerifier { permits: Arc::new(Semaphore::new(limit.max(1))), checks }
    }

    /// Verifies a known user's password. Cheap schemes run inline.
    pub async fn verify(&self, password: String, stored: String) -> Result<Outcome, ApiError> {
        let scheme = Scheme::of(&stored);
        let outcome = if is_costly(&stored) {
            self.blocking(move || verify(password.as_bytes(), &stored)).await?
        } else {
            verify(password.as_bytes(), &stored)
        };
        self.checks.record(scheme, outcome);
        Ok(outcome)
    }

    /// Spends the time of one argon2id verification for an unknown user
    /// (counted as the `dummy` scheme).
    pub async fn verify_unknown_user(&self, password: String) -> Result<(), ApiError> {
        let outcome = self.dummy(password).await?;
        self.checks.record(Scheme::Dummy, outcome);
        Ok(())
    }

    /// Spends the same time after an unusable stored hash, so the answer's
    /// timing does not single the account out. Not a verification of its own:
    /// the login was already counted as `unusable`.
    pub async fn pad_unusable(&self) -> Result<(), ApiError> {
        self.dummy(String::new()).await.map(|_| ())
    }

    async fn dummy(&self, password: String) -> Result<Outcome, ApiError> {
        self.blocking(move || verify(password.as_bytes(), DUMMY_ARGON2ID_HASH)).await
    }

    async fn blocking<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> Result<T, ApiError> {
        let _permit = self.permits.acquire().await.map_err(|_| ApiError::Internal)?;
        actix_web::web::block(work).await.map_err(|e| {
            tracing::error!("password verification task failed: {e}");
            ApiError::Internal
        })
    }
}

/// Logs an unusable stored hash once per user (at warn, without the hash),
/// so a client retrying such an account does not flood the log.
#[derive(Default)]
pub struct UnusableHashLog {
    seen: Mutex<HashSet<Uuid>>,
}

impl UnusableHashLog {
    /// Beyond this many distinct users, further reports go to debug only.
    const MAX_REMEMBERED: usize = 10_000;

    /// Returns whether this report was logged at warn.
    pub fn report(&self, user_id: Uuid, reason: &str) -> bool {
        let first = match self.seen.lock() {
            Ok(mut seen) => seen.len() < Self::MAX_REMEMBERED && seen.insert(user_id),
            Err(_) => true,
        };
        if first {
            tracing::warn!(user_id = %user_id, "data error: unusable password hash ({reason}); logins for this user are refused");
        } else {
            tracing::debug!(user_id = %user_id, "data error: unusable password hash ({reason})");
        }
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_vectors::vectors;

    #[test]
    fn every_password_vector() {
        let v = vectors();
        let entries = v["passwords"].as_array().expect("passwords");
        assert!(entries.len() >= 20, "expected the full vector set");
        for entry in entries {
            let name = entry["name"].as_str().expect("name");
            let password = entry["password"].as_str().expect("password");
            let hash = entry["hash"].as_str().expect("hash");
            let valid = entry["valid"].as_bool().expect("valid");
            let malformed = entry["malformed"].as_bool().unwrap_or(false);
            let outcome = verify(password.as_bytes(), hash);
            match (valid, malformed) {
                (true, _) => assert_eq!(outcome, Outcome::Match, "{name}"),
                (false, false) => assert_eq!(outcome, Outcome::Mismatch, "{name}"),
                (false, true) => assert!(matches!(outcome, Outcome::Unusable(_)), "{name}: {outcome:?}"),
            }
        }
    }

    #[test]
    fn legacy_known_vector_from_the_contract() {
        let stored = "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE=";
        assert_eq!(verify(b"TopSecret0!", stored), Outcome::Match);
        assert_eq!(verify(b"TopSecret0", stored), Outcome::Mismatch);
        assert!(!is_costly(stored));
    }

    #[test]
    fn dummy_hash_is_a_usable_argon2id_hash_that_matches_nothing() {
        assert!(is_costly(DUMMY_ARGON2ID_HASH));
        assert!(DUMMY_ARGON2ID_HASH.contains("m=19456,t=2,p=1"));
        assert_eq!(verify(b"TopSecret0!", DUMMY_ARGON2ID_HASH), Outcome::Mismatch);
        assert_eq!(verify(b"", DUMMY_ARGON2ID_HASH), Outcome::Mismatch);
    }

    #[test]
    fn reasons_never_carry_the_hash() {
        for stored in ["$bcrypt$2b$10$abc", "$hmac-sha256$!!$%%", "$argon2id$v=19$m=x$salt$hash", "plain"] {
            if let Outcome::Unusable(reason) = verify(b"pw", stored) {
                assert!(!reason.contains(stored));
            } else {
                panic!("{stored} should be unusable");
            }
        }
    }

    #[test]
    fn argon2id_with_extra_params_is_unusable() {
        let stored = "$argon2id$v=19$m=8192,t=1,p=2,keyid=AAAA$wewKX1x3DjMtbzJIm1KiAw$Wzz246VuwyT7Q3BxZXS/++K1hI9zDy+fJ+7R1CKe3MU";
        assert!(matches!(verify(b"other-params", stored), Outcome::Unusable(_)));
    }

    #[test]
    fn unusable_hash_is_logged_once_per_user() {
        let log = UnusableHashLog::default();
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        assert!(log.report(a, "x"));
        assert!(!log.report(a, "x"));
        assert!(log.report(b, "x"));
    }

    #[actix_rt::test]
    async fn verifier_runs_argon2id_off_the_executor() {
        let metrics = crate::metrics::Metrics::new().expect("metrics");
        let verifier = PasswordVerifier::new(2, metrics.password_checks());
        let stored = "$argon2id$v=19$m=8192,t=1,p=2$wewKX1x3DjMtbzJIm1KiAw$Wzz246VuwyT7Q3BxZXS/++K1hI9zDy+fJ+7R1CKe3MU";
        let ok = verifier.verify("other-params".into(), stored.into()).await.expect("ran");
        assert_eq!(ok, Outcome::Match);
        verifier.verify_unknown_user("whatever".into()).await.expect("ran");
        verifier.pad_unusable().await.expect("ran");
        let text = String::from_utf8(metrics.render(deadpool_postgres::Status {
            max_size: 1,
            size: 0,
            available: 0,
            waiting: 0,
        }))
        .expect("utf-8");
        for line in [
            r#"simpleauth_password_checks_total{result="match",scheme="argon2id"} 1"#,
            r#"simpleauth_password_checks_total{result="mismatch",scheme="dummy"} 1"#,
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
    }

    #[test]
    fn schemes_are_named_by_the_prefix() {
        assert_eq!(Scheme::of(DUMMY_ARGON2ID_HASH), Scheme::Argon2id);
        assert_eq!(Scheme::of("$argon2id$garbage"), Scheme::Argon2id);
        assert_eq!(Scheme::of("$hmac-sha256$x$y"), Scheme::HmacSha256);
        assert_eq!(Scheme::of("$argon2i$v=19$m=1,t=1,p=1$a$b"), Scheme::Unknown);
        assert_eq!(Scheme::of(""), Scheme::Unknown);
    }
}
