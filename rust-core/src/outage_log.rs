//! `OutageLog`: sorts database failures into an outage (503, the client
//! may retry) or an error (500), and logs an outage once when it starts and
//! once when it ends, not on every request that meets it. A wait for a pooled
//! connection that timed out while every connection was in use is overload,
//! not an outage (503 too, the database is up): a warning of its own, at most
//! one per `BUSY_WARN_INTERVAL`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deadpool_postgres::{PoolError, TimeoutType};
use tokio_postgres::error::SqlState;

use crate::api_error::ApiError;

/// At most one "all busy" warning per this long: under overload every shed
/// request meets it.
pub const BUSY_WARN_INTERVAL: Duration = Duration::from_secs(10);

/// Shared by everything that talks to the database (clones share the state).
#[derive(Clone)]
pub struct OutageLog {
    /// Whether the last attempt reached the database.
    reachable: Arc<AtomicBool>,
    /// When the last "all busy" warning was logged.
    last_busy: Arc<Mutex<Option<Instant>>>,
}

impl Default for OutageLog {
    fn default() -> Self {
        OutageLog { reachable: Arc::new(AtomicBool::new(true)), last_busy: Arc::new(Mutex::new(None)) }
    }
}

impl OutageLog {
    /// No connection: the pool timed out, could not connect, or is closed.
    pub fn pool_failed(&self, err: PoolError) -> ApiError {
        match err {
            PoolError::Timeout(TimeoutType::Wait) => {
                self.busy(&err);
                ApiError::DatabaseUnavailable
            }
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

    /// Every pooled connection stayed in use for the wait timeout; returns
    /// whether this was logged (at most once per `BUSY_WARN_INTERVAL`).
    pub fn busy(&self, cause: &dyn std::error::Error) -> bool {
        let now = Instant::now();
        let mut last = self.last_busy.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if last.is_some_and(|at| now.duration_since(at) < BUSY_WARN_INTERVAL) {
            return false;
        }
        *last = Some(now);
        tracing::warn!(
            "database connections all busy, answering 503 to what waits longer than DB_ACQUIRE_TIMEOUT_MS \
             (overload; the database is up): {}",
            error_chain(cause)
        );
        true
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
    fn a_pool_busy_for_the_wait_timeout_is_overload_not_an_outage() {
        let outage = OutageLog::default();
        let answer = outage.pool_failed(PoolError::Timeout(TimeoutType::Wait));
        assert!(matches!(answer, ApiError::DatabaseUnavailable), "a 503");
        assert!(!outage.reachable(), "no outage began");
        assert!(!outage.busy(&PoolError::Timeout(TimeoutType::Wait)), "one warning per interval");
        assert!(outage.unreachable(&Outer(std::io::Error::other("refused"))), "an outage is still logged");
        let creating = outage.pool_failed(PoolError::Timeout(TimeoutType::Create));
        assert!(matches!(creating, ApiError::DatabaseUnavailable));
        assert!(outage.reachable(), "a connection that could not be made in time is an outage");
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
