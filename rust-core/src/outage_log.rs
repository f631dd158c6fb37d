//! `OutageLog`: sorts database failures into an outage (503, the client
//! may retry) or an error (500), and logs an outage once when it starts and
//! once when it ends, not on every request that meets it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use deadpool_postgres::PoolError;
use tokio_postgres::error::SqlState;

use crate::api_error::ApiError;

/// Shared by everything that talks to the database (clones share the state).
#[derive(Clone)]
pub struct OutageLog {
    /// Whether the last attempt reached the database.
    reachable: Arc<AtomicBool>,
}

impl Default for OutageLog {
    fn default() -> Self {
        OutageLog { reachable: Arc::new(AtomicBool::new(true)) }
    }
}

impl OutageLog {
    /// No connection: the pool timed out, could not connect, or is closed.
    pub fn pool_failed(&self, err: PoolError) -> ApiError {
        match err {
            PoolError::Timeout(_) | PoolError::Backend(_) | PoolError::Closed => {
                self.unreachable(&err);
                ApiError::DatabaseUnavailable
            }
            other => {
                tracing::error!("database pool error: {other}");
                ApiError::Internal
            }
        }
    }

    /// A statement failed: an outage when the connection or the server is the
    /// cause (no SQLSTATE, or classes 08, 53, 57), an error otherwise.
    pub fn query_failed(&self, err: tokio_postgres::Error) -> ApiError {
        if is_outage(err.code()) {
            self.unreachable(&err);
            ApiError::DatabaseUnavailable
        } else {
            tracing::error!("database query failed: {}", error_chain(&err));
            ApiError::Internal
        }
    }

    /// Returns whether this started an outage (and was logged at warn).
    pub fn unreachable(&self, cause: &dyn std::error::Error) -> bool {
        let started = self.reachable.swap(false, Ordering::Relaxed);
        if started {
            tracing::warn!("database unavailable: {}", error_chain(cause));
        } else {
            tracing::debug!("database still unavailable: {}", error_chain(cause));
        }
        started
    }

    /// Returns whether this ended an outage (and was logged).
    pub fn reachable(&self) -> bool {
        let ended = !self.reachable.swap(true, Ordering::Relaxed);
        if ended {
            tracing::info!("database reachable again");
        }
        ended
    }
}

/// Connection-level failures (the server went away, is starting or shutting
/// down, or is out of connections).
fn is_outage(code: Option<&SqlState>) -> bool {
    match code {
        None => true,
        Some(code) => {
            let class = code.code().get(..2).unwrap_or_default();
            matches!(class, "08" | "53" | "57") || *code == SqlState::ADMIN_SHUTDOWN
        }
    }
}

/// "error connecting to server: Connection refused (os error 111)" rather
/// than only the outermost message.
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let message = cause.to_string();
        if !text.contains(&message) {
            text.push_str(": ");
            text.push_str(&message);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn an_outage_is_logged_once_when_it_starts_and_once_when_it_ends() {
        let outage = OutageLog::default();
        let cause = Outer(std::io::Error::other("refused"));
        assert!(!outage.reachable(), "no outage yet");
        assert!(outage.unreachable(&cause));
        assert!(!outage.unreachable(&cause));
        assert!(!outage.clone().unreachable(&cause), "clones share the state");
        assert!(outage.reachable());
        assert!(!outage.reachable());
    }

    #[test]
    fn connection_classes_are_outages_and_the_rest_errors() {
        for code in [
            None,
            Some(&SqlState::CONNECTION_FAILURE),
            Some(&SqlState::TOO_MANY_CONNECTIONS),
            Some(&SqlState::CANNOT_CONNECT_NOW),
            Some(&SqlState::ADMIN_SHUTDOWN),
        ] {
            assert!(is_outage(code), "{code:?}");
        }
        for code in [&SqlState::UNDEFINED_TABLE, &SqlState::SYNTAX_ERROR, &SqlState::INSUFFICIENT_PRIVILEGE] {
            assert!(!is_outage(Some(code)), "{code:?}");
        }
    }

    #[test]
    fn the_chain_names_every_cause_once() {
        assert_eq!(error_chain(&Outer(std::io::Error::other("refused"))), "outer: refused");
    }
}
