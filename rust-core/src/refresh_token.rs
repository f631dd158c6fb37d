//! `RefreshToken`: 32 bytes from the CSPRNG, base64url without padding (43
//! characters of `[A-Za-z0-9_-]`), and the SHA-256 of those characters that
//! is all the database keeps (contract §7).

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// The random bytes of a refresh token.
pub const REFRESH_TOKEN_BYTES: usize = 32;
/// Its length once encoded: base64url without padding of 32 bytes.
pub const REFRESH_TOKEN_CHARS: usize = 43;

/// A refresh token of the right shape: a fresh one, or one presented by a
/// client that passed `parse`. Its `Debug` never shows the token.
#[derive(Clone, PartialEq, Eq)]
pub struct RefreshToken(String);

impl std::fmt::Debug for RefreshToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RefreshToken(<redacted>)")
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the random generator failed")]
pub struct RandomFailed;

impl RefreshToken {
    /// A new token from AWS-LC's generator (the one that already seeds the
    /// signatures; `parsed_key_provider` warms it up at start).
    pub fn generate() -> Result<Self, RandomFailed> {
        let mut bytes = [0u8; REFRESH_TOKEN_BYTES];
        aws_lc_rs::rand::fill(&mut bytes).map_err(|_| RandomFailed)?;
        Ok(Self::from_bytes(&bytes))
    }

    /// The token whose random bytes are `bytes` (the vectors' `bytes_hex`).
    pub fn from_bytes(bytes: &[u8; REFRESH_TOKEN_BYTES]) -> Self {
        RefreshToken(URL_SAFE_NO_PAD.encode(bytes))
    }

    /// A presented value, if it has a refresh token's shape: exactly 43
    /// characters of the base64url alphabet. Anything else never reaches the
    /// database.
    pub fn parse(value: &str) -> Option<Self> {
        let well_formed = value.len() == REFRESH_TOKEN_CHARS
            && value.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        well_formed.then(|| RefreshToken(value.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// SHA-256 over the token's ASCII characters: the `token_hash` column.
    pub fn hash(&self) -> [u8; 32] {
        Sha256::digest(self.0.as_bytes()).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_vectors::vectors;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    fn unhex(text: &str) -> Vec<u8> {
        (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex")).collect()
    }

    #[test]
    fn valid_vectors_encode_parse_and_hash() {
        let v = vectors();
        let valid = v["refresh_tokens"]["valid"].as_array().expect("valid");
        assert!(valid.len() >= 3);
        for entry in valid {
            let token = entry["token"].as_str().expect("token");
            let bytes: [u8; 32] = unhex(entry["bytes_hex"].as_str().expect("bytes")).try_into().expect("32 bytes");
            assert_eq!(RefreshToken::from_bytes(&bytes).as_str(), token);
            let parsed = RefreshToken::parse(token).unwrap_or_else(|| panic!("{token} refused"));
            assert_eq!(hex(&parsed.hash()), entry["sha256_hex"].as_str().expect("sha256"), "{token}");
        }
    }

    #[test]
    fn every_malformed_vector_is_refused() {
        let v = vectors();
        let malformed = v["refresh_tokens"]["malformed"].as_array().expect("malformed");
        assert!(malformed.len() >= 9);
        for entry in malformed {
            let token = entry["token"].as_str().expect("token");
            assert!(RefreshToken::parse(token).is_none(), "{} accepted", entry["name"]);
        }
        let ends = |c: char| format!("{}{c}", "A".repeat(42));
        for other in ["", "a", &"A".repeat(42), &"A".repeat(44), &ends('\n'), &ends('='), &ends('~'), &ends('\0')] {
            assert!(RefreshToken::parse(other).is_none(), "{other:?} accepted");
        }
        assert!(RefreshToken::parse(&"A".repeat(43)).is_some());
    }

    #[test]
    fn generated_tokens_have_the_shape_and_differ() {
        let a = RefreshToken::generate().expect("random");
        let b = RefreshToken::generate().expect("random");
        assert_eq!(a.as_str().len(), REFRESH_TOKEN_CHARS);
        assert_eq!(RefreshToken::parse(a.as_str()), Some(a.clone()));
        assert_ne!(a, b);
        assert_ne!(a.hash(), b.hash());
        assert!(!format!("{a:?}").contains(a.as_str()));
    }
}
