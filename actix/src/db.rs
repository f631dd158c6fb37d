//! The connection pool and the one query of the service.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use deadpool_postgres::{Hook, HookError, Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;
use tokio_postgres::error::SqlState;
use uuid::Uuid;

use crate::config::Config;
use crate::errors::ApiError;
use crate::tls;

/// The same statement in every stack of the project.
pub const FIND_USER_BY_EMAIL: &str =
    "SELECT id, username, name, email, password_hash FROM users WHERE email = lower($1)";

/// A pooled connection unused for longer than this is checked with an empty
/// query before it is handed out; one used more recently is not. HikariCP's
/// `aliveBypassWindowMs` (500 ms), so all four stacks validate alike.
pub const VALIDATE_AFTER_IDLE: Duration = Duration::from_millis(500);

/// How long `/health` gives `SELECT 1` on a pooled connection.
pub const HEALTH_TIMEOUT: Duration = Duration::from_secs(1);

#[derive(Debug, Clone)]
pub struct User {
    pub id: Uuid,
    pub username: String,
    pub name: String,
    pub email: String,
    pub password_hash: String,
}

/// Reads users through the pool; turns database trouble into 503 or 500.
#[derive(Clone)]
pub struct UserRepository {
    pool: Pool,
    /// Whether the last attempt reached the database, so an outage is logged
    /// once when it starts and once when it ends, not on every request.
    reachable: Arc<AtomicBool>,
}

#[derive(Debug, thiserror::Error)]
pub enum PoolBuildError {
    #[error("could not build the database pool: {0}")]
    Build(String),
    #[error("DATABASE_URL: {0}")]
    Tls(String),
}

/// Builds the pool without connecting: the service starts while the database
/// is down and connects on first use.
pub fn create_pool(config: &Config) -> Result<Pool, PoolBuildError> {
    let mut pg = config.database.clone();
    if pg.get_connect_timeout().is_none() {
        pg.connect_timeout(config.acquire_timeout);
    }
    if pg.get_application_name().is_none() {
        pg.application_name("simple-auth-actix");
    }
    // Fast: a checkout only asks whether the connection task has seen the
    // socket close (a restarted or failed-over server closes it); the hook
    // below adds the empty query for connections idle past VALIDATE_AFTER_IDLE.
    let manager_config = ManagerConfig { recycling_method: RecyclingMethod::Fast };
    let manager = if config.database_tls.is_disabled() {
        Manager::from_config(pg, NoTls, manager_config)
    } else {
        Manager::from_config(pg, tls::connector(&config.database_tls).map_err(PoolBuildError::Tls)?, manager_config)
    };
    let check_timeout = config.acquire_timeout;
    Pool::builder(manager)
        .max_size(config.pool_size)
        .runtime(Runtime::Tokio1)
        // Waiting for a free slot, opening a connection and checking an idle
        // one are each bounded, so a database that is down or unreachable
        // answers 503 within about DB_ACQUIRE_TIMEOUT_MS instead of hanging.
        .wait_timeout(Some(config.acquire_timeout))
        .create_timeout(Some(config.acquire_timeout))
        .recycle_timeout(Some(config.acquire_timeout))
        // A connection that fails the check is dropped and the next idle one
        // (or a new one) is tried, within the same wait.
        .pre_recycle(Hook::async_fn(move |client, metrics| {
            Box::pin(async move {
                if metrics.last_used() < VALIDATE_AFTER_IDLE {
                    return Ok(());
                }
                match tokio::time::timeout(check_timeout, client.simple_query("")).await {
                    Ok(Ok(_)) => Ok(()),
                    Ok(Err(e)) => Err(HookError::Backend(e)),
                    Err(_) => Err(HookError::message("idle connection did not answer its check")),
                }
            })
        }))
        .build()
        .map_err(|e| PoolBuildError::Build(e.to_string()))
}

impl UserRepository {
    pub fn new(pool: Pool) -> Self {
        UserRepository { pool, reachable: Arc::new(AtomicBool::new(true)) }
    }

    /// Looks a user up by e-mail (the database lowercases the argument).
    pub async fn find_by_email(&self, email: &str) -> Result<Option<User>, ApiError> {
        let client = self.pool.get().await.map_err(|e| self.pool_failed(e))?;
        let statement = client.prepare_cached(FIND_USER_BY_EMAIL).await.map_err(|e| self.query_failed(e))?;
        let row = client.query_opt(&statement, &[&email]).await.map_err(|e| self.query_failed(e))?;
        self.mark_reachable();
        let Some(row) = row else { return Ok(None) };
        let user = User {
            id: row.try_get(0).map_err(|e| self.query_failed(e))?,
            username: row.try_get(1).map_err(|e| self.query_failed(e))?,
            name: row.try_get(2).map_err(|e| self.query_failed(e))?,
            email: row.try_get(3).map_err(|e| self.query_failed(e))?,
            password_hash: row.try_get(4).map_err(|e| self.query_failed(e))?,
        };
        Ok(Some(user))
    }

    /// The pool's size, idle connections and waiters, for the metrics.
    pub fn pool_status(&self) -> deadpool_postgres::Status {
        self.pool.status()
    }

    /// `SELECT 1` on a pooled connection within a second.
    pub async fn is_healthy(&self) -> bool {
        let check = async {
            let client = self.pool.get().await.map_err(|e| self.pool_failed(e))?;
            client.simple_query("SELECT 1").await.map_err(|e| self.query_failed(e))?;
            Ok::<_, ApiError>(())
        };
        match tokio::time::timeout(HEALTH_TIMEOUT, check).await {
            Ok(Ok(())) => {
                self.mark_reachable();
                true
            }
            Ok(Err(_)) => false,
            Err(_) => {
                self.mark_unreachable(&HealthTimeout);
                false
            }
        }
    }

    fn pool_failed(&self, err: PoolError) -> ApiError {
        match err {
            PoolError::Timeout(_) | PoolError::Backend(_) | PoolError::Closed => {
                self.mark_unreachable(&err);
                ApiError::Unavailable
            }
            other => {
                tracing::error!("database pool error: {other}");
                ApiError::Internal
            }
        }
    }

    /// Connection-level failures (the server went away, is starting or
    /// shutting down, or is out of connections) are 503; anything else
    /// the database says is unexpected here and a 500.
    fn query_failed(&self, err: tokio_postgres::Error) -> ApiError {
        let transient = match err.code() {
            None => true,
            Some(code) => {
                let class = &code.code()[..2.min(code.code().len())];
                matches!(class, "08" | "53" | "57") || *code == SqlState::ADMIN_SHUTDOWN
            }
        };
        if transient {
            self.mark_unreachable(&err);
            ApiError::Unavailable
        } else {
            tracing::error!("database query failed: {}", error_chain(&err));
            ApiError::Internal
        }
    }

    fn mark_unreachable(&self, cause: &dyn std::error::Error) {
        if self.reachable.swap(false, Ordering::Relaxed) {
            tracing::warn!("database unavailable: {}", error_chain(cause));
        } else {
            tracing::debug!("database still unavailable: {}", error_chain(cause));
        }
    }

    fn mark_reachable(&self) {
        if !self.reachable.swap(true, Ordering::Relaxed) {
            tracing::info!("database reachable again");
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[error("health check got no answer within {HEALTH_TIMEOUT:?}")]
struct HealthTimeout;

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
