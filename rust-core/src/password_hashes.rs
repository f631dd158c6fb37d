//! The two stored password schemes of the `users` table, verified:
//! `$argon2id$v=19$m=..,t=..,p=..$salt$hash` and the legacy
//! `$hmac-sha256$<salt>$<hash>` of the original simple-auth service.
//!
//! Pure functions (the vectors test them directly); `PasswordVerifier` runs
//! them off the executor. Comparisons are constant-time. A stored string that
//! fits neither scheme is a data error: the login fails with `invalid_grant`,
//! never a 500.

use std::cell::RefCell;

use argon2::password_hash::{self, PasswordHash};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// What a verification found: exactly these three.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verification {
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
pub fn verify(password: &[u8], stored: &str) -> Verification {
    if stored.starts_with(ARGON2ID_PREFIX) {
        verify_argon2id(password, stored)
    } else if let Some(rest) = stored.strip_prefix(LEGACY_PREFIX) {
        verify_legacy(password, rest)
    } else if stored.is_empty() {
        Verification::Unusable("empty password hash")
    } else {
        Verification::Unusable("unknown password hash scheme")
    }
}

/// Whether `stored` is a hash a login could verify, without verifying
/// anything: `Some(reason)` exactly when `verify` would answer `Unusable`
/// (a refresh for such a user is refused, contract §7).
pub fn unusable_reason(stored: &str) -> Option<&'static str> {
    if stored.starts_with(ARGON2ID_PREFIX) {
        match PasswordHash::new(stored) {
            Ok(hash) => parse_argon2id(&hash).err(),
            Err(_) => Some("malformed argon2id hash"),
        }
    } else if let Some(rest) = stored.strip_prefix(LEGACY_PREFIX) {
        parse_legacy(rest).err()
    } else if stored.is_empty() {
        Some("empty password hash")
    } else {
        Some("unknown password hash scheme")
    }
}

/// The parts of a parsed argon2id string that a verification needs.
struct Argon2idParts {
    params: Params,
    salt: Vec<u8>,
}

/// Only what the contract names: argon2id, version 19, exactly m, t and p,
/// a salt argon2 accepts and an output; at most `MAX_M_COST_KIB` of memory.
fn parse_argon2id(hash: &PasswordHash<'_>) -> Result<Argon2idParts, &'static str> {
    if hash.algorithm.as_str() != "argon2id" || hash.version != Some(19) {
        return Err("argon2id hash with an unsupported version");
    }
    let names: Vec<&str> = hash.params.iter().map(|(name, _)| name.as_str()).collect();
    if names.len() != 3 || !["m", "t", "p"].iter().all(|n| names.contains(n)) {
        return Err("argon2id hash without exactly m, t and p");
    }
    let (Some(salt), Some(_)) = (&hash.salt, &hash.hash) else {
        return Err("argon2id hash without salt or output");
    };
    // m, t, p and the output length come from the string itself.
    let params = Params::try_from(hash).map_err(|_| "argon2id hash with invalid parameters")?;
    if params.m_cost() > MAX_M_COST_KIB {
        return Err("argon2id hash with a memory cost over 256 MiB");
    }
    let mut salt_buf = [0u8; 64];
    let salt = salt.decode_b64(&mut salt_buf).map_err(|_| "argon2id hash with an invalid salt")?;
    if salt.len() < argon2::MIN_SALT_LEN {
        return Err("argon2id hash with a salt shorter than 8 bytes");
    }
    Ok(Argon2idParts { params, salt: salt.to_vec() })
}

fn verify_argon2id(password: &[u8], stored: &str) -> Verification {
    let Ok(hash) = PasswordHash::new(stored) else {
        return Verification::Unusable("malformed argon2id hash");
    };
    let Argon2idParts { params, salt } = match parse_argon2id(&hash) {
        Ok(parts) => parts,
        Err(reason) => return Verification::Unusable(reason),
    };
    let Some(expected) = &hash.hash else {
        return Verification::Unusable("argon2id hash without salt or output");
    };
    let block_count = params.block_count();
    let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params);
    let mut computed = [0u8; password_hash::Output::MAX_LENGTH];
    let computed = &mut computed[..expected.len()];
    let filled =
        with_blocks(block_count, |blocks| argon2.hash_password_into_with_memory(password, &salt, computed, blocks));
    if filled.is_err() {
        return Verification::Unusable("argon2id hash with unusable parameters");
    }
    // Output's equality is constant-time.
    match password_hash::Output::new(computed) {
        Ok(computed) if computed == *expected => Verification::Match,
        Ok(_) => Verification::Mismatch,
        Err(_) => Verification::Unusable("argon2id hash with an unusable output length"),
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

/// `$hmac-sha256$<salt>$<hash>`: the salt (not empty) and the 32-byte output.
fn parse_legacy(rest: &str) -> Result<(Vec<u8>, Vec<u8>), &'static str> {
    let mut parts = rest.split('$');
    let (Some(salt_b64), Some(hash_b64), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err("legacy hash is not $hmac-sha256$<salt>$<hash>");
    };
    let (Ok(salt), Ok(expected)) = (STANDARD.decode(salt_b64), STANDARD.decode(hash_b64)) else {
        return Err("legacy hash with invalid base64");
    };
    if salt.is_empty() || expected.len() != 32 {
        return Err("legacy hash with an empty salt or an output that is not 32 bytes");
    }
    Ok((salt, expected))
}

fn verify_legacy(password: &[u8], rest: &str) -> Verification {
    let (salt, expected) = match parse_legacy(rest) {
        Ok(parts) => parts,
        Err(reason) => return Verification::Unusable(reason),
    };
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&salt) else {
        return Verification::Unusable("legacy hash with an unusable salt");
    };
    mac.update(password);
    // verify_slice compares in constant time.
    match mac.verify_slice(&expected) {
        Ok(()) => Verification::Match,
        Err(_) => Verification::Mismatch,
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
            let verification = verify(password.as_bytes(), hash);
            match (valid, malformed) {
                (true, _) => assert_eq!(verification, Verification::Match, "{name}"),
                (false, false) => assert_eq!(verification, Verification::Mismatch, "{name}"),
                (false, true) => assert!(matches!(verification, Verification::Unusable(_)), "{name}: {verification:?}"),
            }
        }
    }

    #[test]
    fn unusable_reason_agrees_with_verify_on_every_vector() {
        let v = vectors();
        let mut unusable = 0;
        for entry in v["passwords"].as_array().expect("passwords") {
            let (name, hash) = (entry["name"].as_str().expect("name"), entry["hash"].as_str().expect("hash"));
            let malformed = entry["malformed"].as_bool().unwrap_or(false);
            assert_eq!(unusable_reason(hash).is_some(), malformed, "{name}");
            let verified = verify(entry["password"].as_str().expect("password").as_bytes(), hash);
            assert_eq!(unusable_reason(hash).is_some(), matches!(verified, Verification::Unusable(_)), "{name}");
            unusable += usize::from(malformed);
        }
        assert!(unusable >= 5, "expected malformed vectors");
        for stored in ["", "$disabled$x", "$bcrypt$2b$10$abc", "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaGhhc2hoYXNo"]
        {
            assert!(unusable_reason(stored).is_some(), "{stored}");
        }
        assert_eq!(unusable_reason(DUMMY_ARGON2ID_HASH), None);
    }

    #[test]
    fn legacy_known_vector_from_the_contract() {
        let stored = "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE=";
        assert_eq!(verify(b"TopSecret0!", stored), Verification::Match);
        assert_eq!(verify(b"TopSecret0", stored), Verification::Mismatch);
        assert!(!is_costly(stored));
    }

    #[test]
    fn dummy_hash_is_a_usable_argon2id_hash_that_matches_nothing() {
        assert!(is_costly(DUMMY_ARGON2ID_HASH));
        assert!(DUMMY_ARGON2ID_HASH.contains("m=19456,t=2,p=1"));
        assert_eq!(verify(b"TopSecret0!", DUMMY_ARGON2ID_HASH), Verification::Mismatch);
        assert_eq!(verify(b"", DUMMY_ARGON2ID_HASH), Verification::Mismatch);
    }

    #[test]
    fn reasons_never_carry_the_hash() {
        for stored in ["$bcrypt$2b$10$abc", "$hmac-sha256$!!$%%", "$argon2id$v=19$m=x$salt$hash", "plain"] {
            if let Verification::Unusable(reason) = verify(b"pw", stored) {
                assert!(!reason.contains(stored));
            } else {
                panic!("{stored} should be unusable");
            }
        }
    }

    #[test]
    fn argon2id_with_extra_params_is_unusable() {
        let stored = "$argon2id$v=19$m=8192,t=1,p=2,keyid=AAAA$wewKX1x3DjMtbzJIm1KiAw$Wzz246VuwyT7Q3BxZXS/++K1hI9zDy+fJ+7R1CKe3MU";
        assert!(matches!(verify(b"other-params", stored), Verification::Unusable(_)));
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
