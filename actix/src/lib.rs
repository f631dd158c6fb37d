//! simple-auth on actix-web 4: the web layer over `simple_auth_core`, which
//! holds everything below it (settings, keys and signer, password checks,
//! the pool, repositories, limits, metrics, the token service).
//!
//! Here: `handlers` (the routes, the body read within its limit, the client
//! address, the answers) and `http_error` (the core's `ApiError` as a
//! `ResponseError`). `main.rs` is the server and the signals.

pub mod handlers;
pub mod http_error;

#[cfg(test)]
mod tests;

/// The name the service gives itself in its start-up line, its refusals and
/// its database connections (`application_name`).
pub const STACK: &str = "simple-auth-actix";
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
