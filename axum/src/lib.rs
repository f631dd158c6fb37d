//! simple-auth on axum 0.8: the web layer over `simple_auth_core`, which
//! holds everything below it (settings, keys and signer, password checks,
//! the pool, repositories, limits, metrics, the token service).
//!
//! Here: `routes` (the `Router`, its fallbacks and layers), `handlers`,
//! `extractors` (the body within its limit, the client address) and
//! `http_error` (the core's `ApiError` as an `IntoResponse`), `unread_body`
//! (what a handler left of a request body, read before the answer). `main.rs`
//! is the runtime, the server and the signals.

use std::sync::Arc;

use simple_auth_core::app_state::AppState;

pub mod extractors;
pub mod handlers;
pub mod http_error;
pub mod routes;
pub mod unread_body;

#[cfg(test)]
mod tests;

/// The router's state: cloning it for a request is one reference count.
pub type SharedState = Arc<AppState>;

/// The name the service gives itself in its start-up line, its refusals and
/// its database connections (`application_name`).
pub const STACK: &str = "simple-auth-axum";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
