//! simple-auth's Rust core: everything below the web layer of the actix and
//! axum stacks. It checks a password against the channel API's `users`
//! table, issues ID and access tokens (RS256, ES256 or EdDSA, as the key
//! decides) and a refresh token, rotates refresh tokens and revokes their
//! sessions — and knows no web framework: a front end reads the request,
//! calls `TokenService` through `AppState`, and turns the answer or the
//! `ApiError` into its framework's response.
//!
//! Blocking work (argon2id, the two signatures of a token pair, a key
//! reload) runs on tokio's blocking pool (`tokio::task::spawn_blocking`):
//! both front ends run on tokio.

pub mod address_limiter;
pub mod api_error;
pub mod app_state;
pub mod client_address;
pub mod database_health;
pub mod key_set;
pub mod logging;
pub mod metrics;
pub mod outage_log;
pub mod parsed_key_provider;
pub mod password_check_limit;
pub mod password_hashes;
pub mod password_verifier;
pub mod pool;
pub mod refresh_token;
pub mod session_repository;
pub mod settings;
pub mod signing_key;
pub mod tls;
pub mod token_request;
pub mod token_service;
pub mod token_signer;
pub mod unusable_hash_log;
pub mod user;
pub mod user_repository;

/// The contract's shared vectors and dev keys (spec/), and the test state and
/// raw HTTP client, for tests here and in the front ends (feature
/// `test-support`, a dev-dependency there).
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
#[cfg(any(test, feature = "test-support"))]
pub mod test_vectors;

/// The exit code of a refused start (bad settings, key, TLS file or port).
pub const EXIT_REFUSED: u8 = 2;
