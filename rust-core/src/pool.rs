//! The deadpool-postgres pool: size, timeouts, TLS, and the check of
//! connections that sat idle.

use std::time::Duration;

use deadpool_postgres::{Hook, HookError, Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;

use crate::settings::Settings;
use crate::tls;

/// A pooled connection unused for longer than this is checked with an empty
/// query before it is handed out; one used more recently is not. HikariCP's
/// `aliveBypassWindowMs` (500 ms), so every stack validates alike.
pub const VALIDATE_AFTER_IDLE: Duration = Duration::from_millis(500);

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
    Pool::builder(manager)
        .max_size(settings.pool_size)
        .runtime(Runtime::Tokio1)
        // Waiting for a free slot, opening a connection and checking an idle
        // one are each bounded, so a database that is down or unreachable
        // answers 503 within about DB_ACQUIRE_TIMEOUT_MS instead of hanging.
        .wait_timeout(Some(settings.acquire_timeout))
        .create_timeout(Some(settings.acquire_timeout))
        .recycle_timeout(Some(settings.acquire_timeout))
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
}
