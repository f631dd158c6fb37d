//! Configuration from the environment, with the contract's names and defaults.
//!
//! Everything is read and checked once at start-up; a bad value stops the
//! process with one line that names the variable (see `main`).

use std::str::FromStr;
use std::time::Duration;

use tracing::Level;

/// Where the PEM of the signing key comes from.
#[derive(Clone)]
pub enum KeySource {
    File(String),
    Inline(String),
}

impl std::fmt::Debug for KeySource {
    // The inline PEM is a secret: never print it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySource::File(path) => write!(f, "File({path})"),
            KeySource::Inline(_) => f.write_str("Inline(<redacted>)"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub host: String,
    pub port: u16,
    pub database: tokio_postgres::Config,
    pub pool_size: usize,
    pub acquire_timeout: Duration,
    pub key: KeySource,
    pub issuer: String,
    pub audience: String,
    pub token_ttl_seconds: u64,
    pub log_level: Level,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{name} is not valid: {reason}")]
    Invalid { name: &'static str, reason: String },
    #[error("DATABASE_URL is malformed: {0} (expected postgres://user:password@host:port/database[?sslmode=disable])")]
    DatabaseUrl(String),
    #[error(
        "no signing key: set JWT_PRIVATE_KEY_FILE (path to a PKCS#8 PEM RSA key) or JWT_PRIVATE_KEY (the PEM itself)"
    )]
    MissingKey,
}

pub const DEFAULT_DATABASE_URL: &str = "postgres://auth:auth@127.0.0.1:5432/auth";

impl Config {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the configuration through `lookup`, so tests need not touch the
    /// process environment. Empty values count as unset.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let get = |name: &str| lookup(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());

        let host = get("HOST").unwrap_or_else(|| "0.0.0.0".to_owned());
        let port = parse_number::<u16>(&get, "PORT", 8080)?;
        let database_url = get("DATABASE_URL").unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned());
        let database = parse_database_url(&database_url)?;
        let pool_size = parse_number::<usize>(&get, "DB_POOL_SIZE", 10)?;
        if pool_size == 0 {
            return Err(invalid("DB_POOL_SIZE", "must be at least 1"));
        }
        let acquire_ms = parse_number::<u64>(&get, "DB_ACQUIRE_TIMEOUT_MS", 1000)?;
        if acquire_ms == 0 {
            return Err(invalid("DB_ACQUIRE_TIMEOUT_MS", "must be at least 1"));
        }
        // The file wins over the inline PEM when both are set: a file is the
        // more deliberate choice, an inherited inline secret the likelier accident.
        let key = match (lookup("JWT_PRIVATE_KEY_FILE").filter(|v| !v.trim().is_empty()), lookup("JWT_PRIVATE_KEY")) {
            (Some(path), _) => KeySource::File(path.trim().to_owned()),
            (None, Some(pem)) if !pem.trim().is_empty() => KeySource::Inline(pem),
            _ => return Err(ConfigError::MissingKey),
        };
        let issuer = get("JWT_ISSUER").unwrap_or_else(|| "http://localhost:8080".to_owned());
        let audience = get("JWT_AUDIENCE").unwrap_or_else(|| "channel-api".to_owned());
        let token_ttl_seconds = parse_number::<u64>(&get, "TOKEN_TTL_SECONDS", 600)?;
        if token_ttl_seconds == 0 {
            return Err(invalid("TOKEN_TTL_SECONDS", "must be at least 1"));
        }
        let log_level = match get("LOG_LEVEL").map(|v| v.to_ascii_lowercase()).as_deref() {
            None | Some("info") => Level::INFO,
            Some("error") => Level::ERROR,
            Some("warn") | Some("warning") => Level::WARN,
            Some("debug") => Level::DEBUG,
            Some("trace") => Level::TRACE,
            Some(other) => return Err(invalid("LOG_LEVEL", format!("{other:?} (use error, warn, info or debug)"))),
        };

        Ok(Config {
            host,
            port,
            database,
            pool_size,
            acquire_timeout: Duration::from_millis(acquire_ms),
            key,
            issuer,
            audience,
            token_ttl_seconds,
            log_level,
        })
    }
}

fn invalid(name: &'static str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid { name, reason: reason.into() }
}

fn parse_number<T: FromStr>(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: T,
) -> Result<T, ConfigError> {
    match get(name) {
        None => Ok(default),
        Some(raw) => raw.parse::<T>().map_err(|_| invalid(name, format!("{raw:?} is not a valid number"))),
    }
}

/// Parses a libpq-style URL (the form fly.io sets). The key=value form that
/// tokio-postgres also understands is refused: the contract names a URL, and
/// a typo such as `mysql://...` must not slip through as "key=value".
/// Error texts never repeat the URL, which carries the password.
pub fn parse_database_url(url: &str) -> Result<tokio_postgres::Config, ConfigError> {
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("postgres://") || lower.starts_with("postgresql://")) {
        return Err(ConfigError::DatabaseUrl("the scheme must be postgres:// or postgresql://".to_owned()));
    }
    let config = tokio_postgres::Config::from_str(url).map_err(|e| ConfigError::DatabaseUrl(e.to_string()))?;
    if config.get_hosts().is_empty() {
        return Err(ConfigError::DatabaseUrl("no host".to_owned()));
    }
    // This build connects without TLS (as fly.io's private network expects:
    // sslmode=disable); a URL that requires TLS would fail on every request.
    if matches!(config.get_ssl_mode(), tokio_postgres::config::SslMode::Require) {
        return Err(ConfigError::DatabaseUrl(
            "sslmode=require is not supported by this build (use sslmode=disable or prefer)".to_owned(),
        ));
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_lookup(move |name| map.get(name).cloned())
    }

    #[test]
    fn defaults_follow_the_contract() {
        let c = config(&[("JWT_PRIVATE_KEY_FILE", "/k.pem")]).expect("valid");
        assert_eq!((c.host.as_str(), c.port), ("0.0.0.0", 8080));
        assert_eq!(c.pool_size, 10);
        assert_eq!(c.acquire_timeout, Duration::from_millis(1000));
        assert_eq!(c.issuer, "http://localhost:8080");
        assert_eq!(c.audience, "channel-api");
        assert_eq!(c.token_ttl_seconds, 600);
        assert_eq!(c.log_level, Level::INFO);
        assert_eq!(c.database.get_dbname(), Some("auth"));
        assert_eq!(c.database.get_ports(), &[5432]);
    }

    #[test]
    fn missing_key_is_refused_naming_the_variable() {
        let err = config(&[]).expect_err("refused");
        assert!(err.to_string().contains("JWT_PRIVATE_KEY"));
    }

    #[test]
    fn fly_io_url_with_query_is_accepted() {
        let c = config(&[
            ("JWT_PRIVATE_KEY", "pem"),
            ("DATABASE_URL", "postgres://u:p%40ss@db.internal:5433/app?sslmode=disable"),
        ])
        .expect("valid");
        assert_eq!(c.database.get_user(), Some("u"));
        assert_eq!(c.database.get_password(), Some(&b"p@ss"[..]));
        assert_eq!(c.database.get_ports(), &[5433]);
        assert_eq!(c.database.get_dbname(), Some("app"));
    }

    #[test]
    fn malformed_urls_are_refused_without_echoing_them() {
        for url in [
            "not a url",
            "mysql://auth:auth@127.0.0.1:3306/auth",
            "postgres://auth:secretpw@127.0.0.1:notaport/auth",
            "postgres://auth:secretpw@127.0.0.1:5432/auth?sslmode=require",
            "postgres://auth:secretpw@127.0.0.1:5432/auth?sslmode=bogus",
        ] {
            let err = config(&[("JWT_PRIVATE_KEY", "pem"), ("DATABASE_URL", url)]).expect_err(url);
            let text = err.to_string();
            assert!(text.contains("DATABASE_URL"), "{text}");
            assert!(!text.contains("secretpw"), "{text}");
        }
    }

    #[test]
    fn bad_numbers_and_levels_are_refused() {
        for (name, value) in
            [("PORT", "eighty"), ("DB_POOL_SIZE", "0"), ("LOG_LEVEL", "loud"), ("TOKEN_TTL_SECONDS", "-1")]
        {
            let err = config(&[("JWT_PRIVATE_KEY", "pem"), (name, value)]).expect_err(name);
            assert!(err.to_string().contains(name), "{err}");
        }
    }
}
