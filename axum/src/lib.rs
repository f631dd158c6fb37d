//! simple-auth on axum 0.8: issues ID and access tokens (RS256, ES256 or
//! EdDSA, as the key decides) and a refresh token after checking a password
//! against the channel API's `users` table, rotates refresh tokens and revokes
//! their sessions.
//!
//! A library so that two binaries share it: the service (`main.rs`) and the
//! benchmark's signing probe (`bin/signbench.rs`).
//!
//! The web layer is `routes` (the `Router`), `handlers`, the extractors
//! (`token_request`, `client_address`) and `errors` (`ApiError` as an
//! `IntoResponse`); everything below it knows nothing of axum.

pub mod app_state;
pub mod client_address;
pub mod database_health;
pub mod database_outage;
pub mod errors;
pub mod handlers;
pub mod key_set;
pub mod login_limits;
pub mod metrics;
pub mod parsed_key_provider;
pub mod password_hashes;
pub mod password_verifier;
pub mod pool;
pub mod refresh_token;
pub mod routes;
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

#[cfg(test)]
mod test_vectors;
#[cfg(test)]
mod tests;

/// The name the service gives itself in its start-up line and its refusals.
pub const STACK: &str = "simple-auth-axum";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The exit code of a refused start (bad settings, key, TLS file or port).
pub const EXIT_REFUSED: u8 = 2;
