//! The deadpool-postgres pool: size, timeouts, TLS, the check of
//! connections that sat idle, and the retirement of connections too old or
//! idle too long (DB_MAX_LIFETIME_SECONDS, DB_IDLE_TIMEOUT_SECONDS, contract
//! §5).
//!
//! Only connections in the pool are retired, never one in use: at checkout
//! (the `pre_recycle` hook refuses it, and the pool tries the next idle one
//! or opens a new one) and by `retire_idle_connections`, a task that sweeps
//! the idle ones with `Pool::retain`. A retired connection is dropped, which
//! closes it; the pool opens another on demand, so an idle pool shrinks to
//! nothing and grows back.

use std::time::Duration;

use deadpool_postgres::{Hook, HookError, Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use crate::settings::Settings;
use crate::tls;

/// A pooled connection unused for longer than this is checked with an empty
/// query before it is handed out; one used more recently is not. HikariCP's
/// `aliveBypassWindowMs` (500 ms), so every stack validates alike.
pub const VALIDATE_AFTER_IDLE: Duration = Duration::from_millis(500);

/// Which pooled connections are closed: older than the lifetime, or idle
/// longer than the idle timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retirement {
    pub max_lifetime: Duration,
    pub idle_timeout: Duration,
}

impl Retirement {
    pub fn of(settings: &Settings) -> Self {
        Retirement { max_lifetime: settings.max_lifetime, idle_timeout: settings.idle_timeout }
    }

    /// Whether a connection opened `age` ago and last handed out `idle` ago
    /// (deadpool's `Metrics::age` and `last_used`) is to be closed.
    pub fn retires(&self, age: Duration, idle: Duration) -> bool {
        age >= self.max_lifetime || idle >= self.idle_timeout
    }

    /// How often the idle connections are swept: a connection past either
    /// limit is closed at most this long after it, and an idle timeout is
    /// at least 10 s, so a sweep every tenth of it (at most 30 s, HikariCP's
    /// housekeeping period) keeps the overrun small.
    pub fn sweep_period(&self) -> Duration {
        (self.idle_timeout.min(self.max_lifetime) / 10).clamp(Duration::from_secs(1), Duration::from_secs(30))
    }
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
pub fn create_pool(settings: &Settings, application_name: &str) -> Result<Pool, PoolBuildError> {
    let mut pg = settings.database.clone();
    if pg.get_connect_timeout().is_none() {
        pg.connect_timeout(settings.acquire_timeout);
    }
    if pg.get_application_name().is_none() {
        pg.application_name(application_name);
    }
    // Fast: a checkout only asks whether the connection task has seen the
    // socket close (a restarted or failed-over server closes it); the hook
    // below adds the empty query for connections idle past VALIDATE_AFTER_IDLE.
    let manager_config = ManagerConfig { recycling_method: RecyclingMethod::Fast };
    let manager = if settings.database_tls.is_disabled() {
        Manager::from_config(pg, NoTls, manager_config)
    } else {
        let connector = tls::connector(&settings.database_tls).map_err(PoolBuildError::Tls)?;
        Manager::from_config(pg, connector, manager_config)
    };
    let check_timeout = settings.acquire_timeout;
    let retirement = Retirement::of(settings);
    Pool::builder(manager)
        .max_size(settings.pool_size)
        .runtime(Runtime::Tokio1)
        // Waiting for a free slot, opening a connection and checking an idle
        // one are each bounded, so a database that is down or unreachable
        // answers 503 within about DB_ACQUIRE_TIMEOUT_MS instead of hanging.
        .wait_timeout(Some(settings.acquire_timeout))
        .create_timeout(Some(settings.acquire_timeout))
        .recycle_timeout(Some(settings.acquire_timeout))
        // A connection past its lifetime or idle timeout, or one that fails
        // the check, is dropped and the next idle one (or a new one) is
        // tried, within the same wait.
        .pre_recycle(Hook::async_fn(move |client, metrics| {
            Box::pin(async move {
                if retirement.retires(metrics.age(), metrics.last_used()) {
                    return Err(HookError::message("connection retired (lifetime or idle timeout)"));
                }
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

/// Sweeps the idle connections every `Retirement::sweep_period` and closes
/// those past either limit, so an idle pool shrinks without waiting for a
/// checkout; ends when the pool is closed. Runs on the caller's tokio
/// runtime (both front ends run on tokio).
pub fn retire_idle_connections(pool: Pool, retirement: Retirement) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut sweeps = tokio::time::interval(retirement.sweep_period());
        sweeps.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            sweeps.tick().await;
            if pool.is_closed() {
                return;
            }
            // `retain` holds the pool's lock while it runs: the predicate only compares two durations.
            let retired = pool.retain(|_, metrics| !retirement.retires(metrics.age(), metrics.last_used()));
            if !retired.removed.is_empty() {
                tracing::debug!(
                    "closed {} pooled connection(s) past their lifetime or idle timeout",
                    retired.removed.len()
                );
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(url: &str) -> Settings {
        Settings::from_lookup(|name| match name {
            "DATABASE_URL" => Some(url.to_owned()),
            "JWT_PRIVATE_KEY" => Some("unused here".into()),
            "DB_POOL_SIZE" => Some("3".into()),
            "DB_ACQUIRE_TIMEOUT_MS" => Some("250".into()),
            _ => None,
        })
        .expect("settings")
    }

    #[tokio::test]
    async fn the_pool_is_lazy_and_sized_by_the_settings() {
        let pool =
            create_pool(&settings("postgres://auth:auth@127.0.0.1:1/auth?sslmode=disable"), "simple-auth-core-test")
                .expect("pool");
        let status = pool.status();
        assert_eq!((status.max_size, status.size), (3, 0));
        assert_eq!(pool.timeouts().wait, Some(Duration::from_millis(250)));
        assert_eq!(pool.timeouts().create, Some(Duration::from_millis(250)));
        assert_eq!(pool.timeouts().recycle, Some(Duration::from_millis(250)));
    }

    #[test]
    fn an_unusable_root_certificate_stops_the_build() {
        let url = "postgres://auth:auth@127.0.0.1:1/auth?sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem";
        let err = create_pool(&settings(url), "simple-auth-core-test").expect_err("refused").to_string();
        assert!(err.starts_with("DATABASE_URL: sslrootcert"), "{err}");
    }

    #[test]
    fn a_connection_retires_at_its_lifetime_or_idle_timeout() {
        let retirement = Retirement { max_lifetime: Duration::from_secs(600), idle_timeout: Duration::from_secs(300) };
        let s = Duration::from_secs;
        assert!(!retirement.retires(s(0), s(0)));
        assert!(!retirement.retires(s(599), s(299)), "young and recently used");
        assert!(retirement.retires(s(600), s(0)), "at the lifetime, however busy");
        assert!(retirement.retires(s(601), s(1)));
        assert!(retirement.retires(s(300), s(300)), "idle for the idle timeout");
        assert!(retirement.retires(s(400), s(350)));
        assert!(!retirement.retires(s(400), Duration::from_millis(299_999)));
    }

    #[test]
    fn the_retirement_follows_the_settings_and_sweeps_often_enough() {
        let retirement = Retirement::of(&settings("postgres://auth:auth@127.0.0.1:1/auth"));
        assert_eq!(
            retirement,
            Retirement { max_lifetime: Duration::from_secs(600), idle_timeout: Duration::from_secs(300) }
        );
        assert_eq!(retirement.sweep_period(), Duration::from_secs(30));
        let shortest = Retirement { max_lifetime: Duration::from_secs(30), idle_timeout: Duration::from_secs(10) };
        assert_eq!(shortest.sweep_period(), Duration::from_secs(1));
    }

    #[tokio::test]
    async fn the_sweeper_ends_when_the_pool_is_closed() {
        let pool =
            create_pool(&settings("postgres://auth:auth@127.0.0.1:1/auth?sslmode=disable"), "simple-auth-core-test")
                .expect("pool");
        let shortest = Retirement { max_lifetime: Duration::from_secs(30), idle_timeout: Duration::from_secs(10) };
        let sweeper = retire_idle_connections(pool.clone(), shortest);
        pool.close();
        // The first tick is immediate: the task sees the closed pool and ends.
        sweeper.await.expect("the sweeper ended without a panic");
    }
}
