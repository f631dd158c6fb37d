//! `DatabaseHealth`: the readiness check behind `GET /health`, and the pool
//! figures `GET /metrics` reports.

use std::time::Duration;

use deadpool_postgres::{Pool, Status};

use crate::outage_log::OutageLog;

/// How long `/health` gives `SELECT 1` on a pooled connection.
pub const HEALTH_TIMEOUT: Duration = Duration::from_secs(1);

#[derive(Clone)]
pub struct DatabaseHealth {
    pool: Pool,
    outage: OutageLog,
}

#[derive(Debug, thiserror::Error)]
#[error("health check got no answer within {HEALTH_TIMEOUT:?}")]
struct HealthTimeout;

impl DatabaseHealth {
    pub fn new(pool: Pool, outage: OutageLog) -> Self {
        DatabaseHealth { pool, outage }
    }

    /// `SELECT 1` on a pooled connection within `HEALTH_TIMEOUT`.
    pub async fn is_up(&self) -> bool {
        let check = async {
            let client = self.pool.get().await.map_err(|e| self.outage.pool_failed(e))?;
            client.simple_query("SELECT 1").await.map_err(|e| self.outage.query_failed(e))
        };
        match tokio::time::timeout(HEALTH_TIMEOUT, check).await {
            Ok(Ok(_)) => {
                self.outage.reachable();
                true
            }
            Ok(Err(_)) => false,
            Err(_) => {
                self.outage.unreachable(&HealthTimeout);
                false
            }
        }
    }

    /// The pool's size, idle connections and waiters.
    pub fn pool_status(&self) -> Status {
        self.pool.status()
    }
}
