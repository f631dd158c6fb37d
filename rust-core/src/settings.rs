//! `Settings`: the environment, with the contract's names and defaults.
//!
//! Everything is read and checked once at start-up; a bad value stops the
//! process with one line that names the variable and exit code 2 (see `main`).
//!
//! Read by hand rather than through `envy`/`config`: most of this file is the
//! contract's rules (empty means unset, minimums, which key source wins, the
//! libpq URL, the log level names), which those crates leave to the caller,
//! and their errors name the lower-cased field, not the variable.

use std::str::FromStr;
use std::time::Duration;

use percent_encoding::percent_decode_str;
use tracing::Level;

use crate::client_address::ClientAddress;
use crate::tls::DatabaseTls;
use crate::token_request::client_id_problem;

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
pub struct Settings {
    pub host: String,
    pub port: u16,
    /// METRICS_PORT: where `GET /metrics` is served (never on PORT).
    pub metrics_port: u16,
    pub database: tokio_postgres::Config,
    /// `sslmode` / `sslrootcert` of DATABASE_URL.
    pub database_tls: DatabaseTls,
    pub pool_size: usize,
    pub acquire_timeout: Duration,
    /// DB_MAX_LIFETIME_SECONDS: a pooled connection older than this is
    /// closed when it is next found idle (`pool::Retirement`).
    pub max_lifetime: Duration,
    /// DB_IDLE_TIMEOUT_SECONDS: a connection idle in the pool longer than
    /// this is closed.
    pub idle_timeout: Duration,
    pub key: KeySource,
    /// JWT_PUBLIC_KEYS_FILE: further keys to publish in the JWK set.
    pub public_keys_file: Option<String>,
    pub issuer: String,
    pub audience: String,
    pub token_ttl_seconds: u64,
    /// The access token's `client_id` when the request names none.
    pub default_client_id: String,
    /// A refresh token's lifetime from its issue (§7).
    pub refresh_ttl_seconds: i32,
    /// A session's lifetime from its password grant (§7): no refresh token outlives it.
    pub refresh_max_lifetime_seconds: i32,
    /// Failed logins of one username within the window that lock it (§8).
    pub login_max_failures: i32,
    /// The window of both failure limits (§8).
    pub login_failure_window_seconds: i32,
    /// Failed logins from one client address within the window that lock it (§8).
    pub login_ip_max_failures: i32,
    /// TRUSTED_PROXIES: the peers whose X-Forwarded-For entries are believed (§8).
    pub client_address: ClientAddress,
    /// argon2id checks admitted at once, running or waiting for a core (§8).
    pub max_password_checks: usize,
    pub log_level: Level,
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{name} is not valid: {reason}")]
    Invalid { name: &'static str, reason: String },
    #[error("DATABASE_URL is malformed: {0} (expected postgres://user:password@host:port/database[?sslmode=disable])")]
    DatabaseUrl(String),
    #[error(
        "TRUST_PROXY_HEADERS was replaced by TRUSTED_PROXIES: unset it and list the proxies' addresses or CIDRs in TRUSTED_PROXIES"
    )]
    Replaced,
    #[error("DATABASE_URL: {0}")]
    DatabaseTls(String),
    #[error(
        "no signing key: set JWT_PRIVATE_KEY_FILE (path to a PKCS#8 PEM key: RSA, EC P-256 or Ed25519) or JWT_PRIVATE_KEY (the PEM itself)"
    )]
    MissingKey,
}

pub const DEFAULT_DATABASE_URL: &str = "postgres://auth:auth@127.0.0.1:5432/auth";

impl Settings {
    pub fn from_env() -> Result<Self, SettingsError> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the settings through `lookup`, so tests need not touch the
    /// process environment. Empty values count as unset.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, SettingsError> {
        let get = |name: &str| lookup(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());

        let host = get("HOST").unwrap_or_else(|| "0.0.0.0".to_owned());
        let port = parse_number::<u16>(&get, "PORT", 8080)?;
        let metrics_port = parse_number::<i64>(&get, "METRICS_PORT", 9091)?;
        let metrics_port = match u16::try_from(metrics_port) {
            Ok(p) if p >= 1 && p != port => p,
            Ok(p) if p == port => {
                return Err(invalid("METRICS_PORT", format!("{p} is PORT as well; use another port")));
            }
            _ => return Err(invalid("METRICS_PORT", format!("{metrics_port} is not a port from 1 to 65535"))),
        };
        let database_url = get("DATABASE_URL").unwrap_or_else(|| DEFAULT_DATABASE_URL.to_owned());
        let (database, database_tls) = parse_database_url(&database_url)?;
        let pool_size = parse_number::<usize>(&get, "DB_POOL_SIZE", 10)?;
        if pool_size == 0 {
            return Err(invalid("DB_POOL_SIZE", "must be at least 1"));
        }
        let acquire_ms = parse_number::<u64>(&get, "DB_ACQUIRE_TIMEOUT_MS", 1000)?;
        if acquire_ms == 0 {
            return Err(invalid("DB_ACQUIRE_TIMEOUT_MS", "must be at least 1"));
        }
        let (max_lifetime, idle_timeout) = parse_pool_lifetimes(&get)?;
        // The file wins over the inline PEM when both are set: a file is the
        // more deliberate choice, an inherited inline secret the likelier accident.
        // Secret stores often flatten a PEM to one line with literal `\n`
        // sequences; those are read as newlines (a PEM has no backslash).
        let key = match (get("JWT_PRIVATE_KEY_FILE"), get("JWT_PRIVATE_KEY")) {
            (Some(path), _) => KeySource::File(path),
            (None, Some(pem)) => KeySource::Inline(pem.replace("\\n", "\n")),
            (None, None) => return Err(SettingsError::MissingKey),
        };
        let public_keys_file = get("JWT_PUBLIC_KEYS_FILE");
        let issuer = get("JWT_ISSUER").unwrap_or_else(|| "http://localhost:8080".to_owned());
        check_issuer(&issuer)?;
        let audience = get("JWT_AUDIENCE").unwrap_or_else(|| "channel-api".to_owned());
        let token_ttl_seconds = parse_number::<u64>(&get, "TOKEN_TTL_SECONDS", 600)?;
        if token_ttl_seconds == 0 {
            return Err(invalid("TOKEN_TTL_SECONDS", "must be at least 1"));
        }
        let default_client_id = get("DEFAULT_CLIENT_ID").unwrap_or_else(|| "public".to_owned());
        if let Some(problem) = client_id_problem(&default_client_id) {
            return Err(invalid("DEFAULT_CLIENT_ID", problem));
        }
        // PostgreSQL `integer`s in the statements of §7 and §8, hence i32.
        let refresh_ttl_seconds = parse_positive(&get, "REFRESH_TTL_SECONDS", 2_592_000)?;
        let refresh_max_lifetime_seconds = parse_positive(&get, "REFRESH_MAX_LIFETIME_SECONDS", 7_776_000)?;
        if refresh_max_lifetime_seconds < refresh_ttl_seconds {
            return Err(invalid(
                "REFRESH_MAX_LIFETIME_SECONDS",
                format!("{refresh_max_lifetime_seconds} is less than REFRESH_TTL_SECONDS ({refresh_ttl_seconds})"),
            ));
        }
        let login_max_failures = parse_positive(&get, "LOGIN_MAX_FAILURES", 10)?;
        let login_failure_window_seconds = parse_positive(&get, "LOGIN_FAILURE_WINDOW_SECONDS", 300)?;
        let login_ip_max_failures = parse_positive(&get, "LOGIN_IP_MAX_FAILURES", 100)?;
        // An old configuration must not silently change meaning.
        if get("TRUST_PROXY_HEADERS").is_some() {
            return Err(SettingsError::Replaced);
        }
        let client_address = ClientAddress::parse(&get("TRUSTED_PROXIES").unwrap_or_default())
            .map_err(|reason| invalid("TRUSTED_PROXIES", reason))?;
        // available_parallelism follows the cgroup's CPU quota.
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        let max_password_checks =
            parse_positive(&get, "MAX_PASSWORD_CHECKS", i32::try_from(4 * cores).unwrap_or(i32::MAX))? as usize;
        let log_level = match get("LOG_LEVEL").map(|v| v.to_ascii_lowercase()).as_deref() {
            None | Some("info") => Level::INFO,
            Some("error") => Level::ERROR,
            Some("warn") | Some("warning") => Level::WARN,
            Some("debug") => Level::DEBUG,
            Some("trace") => Level::TRACE,
            Some(other) => return Err(invalid("LOG_LEVEL", format!("{other:?} (use error, warn, info or debug)"))),
        };

        Ok(Settings {
            host,
            port,
            metrics_port,
            database,
            database_tls,
            pool_size,
            acquire_timeout: Duration::from_millis(acquire_ms),
            max_lifetime,
            idle_timeout,
            key,
            public_keys_file,
            issuer,
            audience,
            token_ttl_seconds,
            default_client_id,
            refresh_ttl_seconds,
            refresh_max_lifetime_seconds,
            login_max_failures,
            login_failure_window_seconds,
            login_ip_max_failures,
            client_address,
            max_password_checks,
            log_level,
        })
    }
}

fn invalid(name: &'static str, reason: impl Into<String>) -> SettingsError {
    SettingsError::Invalid { name, reason: reason.into() }
}

/// JWT_ISSUER is the base of the discovery document's URLs: an absolute
/// `http` or `https` URL with a host and no query or fragment.
fn check_issuer(issuer: &str) -> Result<(), SettingsError> {
    let url = url::Url::parse(issuer)
        .map_err(|e| invalid("JWT_ISSUER", format!("{issuer:?} is not an absolute URL ({e})")))?;
    let problem = if !matches!(url.scheme(), "http" | "https") {
        "the scheme must be http or https"
    } else if url.host_str().is_none_or(str::is_empty) {
        "it has no host"
    } else if url.query().is_some() || issuer.contains('?') {
        "it must not have a query"
    } else if url.fragment().is_some() || issuer.contains('#') {
        "it must not have a fragment"
    } else {
        return Ok(());
    };
    Err(invalid("JWT_ISSUER", format!("{issuer:?}: {problem}")))
}

/// The shortest DB_MAX_LIFETIME_SECONDS and DB_IDLE_TIMEOUT_SECONDS (contract
/// §5): HikariCP's own minimums, so every stack can honour the same values.
pub const MIN_MAX_LIFETIME_SECONDS: i32 = 30;
pub const MIN_IDLE_TIMEOUT_SECONDS: i32 = 10;

/// DB_MAX_LIFETIME_SECONDS (default 600) and DB_IDLE_TIMEOUT_SECONDS (default
/// 300): positive whole numbers, the lifetime at least 30 s, the idle
/// timeout at least 10 s and shorter than the lifetime.
fn parse_pool_lifetimes(get: &impl Fn(&str) -> Option<String>) -> Result<(Duration, Duration), SettingsError> {
    let lifetime = parse_positive(get, "DB_MAX_LIFETIME_SECONDS", 600)?;
    if lifetime < MIN_MAX_LIFETIME_SECONDS {
        return Err(invalid(
            "DB_MAX_LIFETIME_SECONDS",
            format!("{lifetime} is shorter than the minimum of {MIN_MAX_LIFETIME_SECONDS} seconds"),
        ));
    }
    let idle = parse_positive(get, "DB_IDLE_TIMEOUT_SECONDS", 300)?;
    if idle < MIN_IDLE_TIMEOUT_SECONDS {
        return Err(invalid(
            "DB_IDLE_TIMEOUT_SECONDS",
            format!("{idle} is shorter than the minimum of {MIN_IDLE_TIMEOUT_SECONDS} seconds"),
        ));
    }
    if idle >= lifetime {
        return Err(invalid(
            "DB_IDLE_TIMEOUT_SECONDS",
            format!("{idle} must be shorter than DB_MAX_LIFETIME_SECONDS ({lifetime})"),
        ));
    }
    let seconds = |value: i32| Duration::from_secs(u64::from(value.unsigned_abs()));
    Ok((seconds(lifetime), seconds(idle)))
}

/// A whole number from 1 to 2147483647 (PostgreSQL's `integer`).
fn parse_positive(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: i32,
) -> Result<i32, SettingsError> {
    let value = parse_number::<i64>(get, name, i64::from(default))?;
    match i32::try_from(value) {
        Ok(value) if value >= 1 => Ok(value),
        _ => Err(invalid(name, format!("{value} is not a whole number from 1 to {}", i32::MAX))),
    }
}

fn parse_number<T: FromStr>(
    get: &impl Fn(&str) -> Option<String>,
    name: &'static str,
    default: T,
) -> Result<T, SettingsError> {
    match get(name) {
        None => Ok(default),
        Some(raw) => raw.parse::<T>().map_err(|_| invalid(name, format!("{raw:?} is not a valid number"))),
    }
}

/// Parses a libpq-style URL (the form fly.io sets). The key=value form that
/// tokio-postgres also understands is refused: the contract names a URL, and
/// a typo such as `mysql://...` must not slip through as "key=value".
/// `sslmode` and `sslrootcert` are taken out and read with libpq's meanings
/// (tokio-postgres knows neither `verify-ca`/`verify-full` nor
/// `sslrootcert`); the rest goes to tokio-postgres.
/// Error texts never repeat the URL, which carries the password.
pub fn parse_database_url(url: &str) -> Result<(tokio_postgres::Config, DatabaseTls), SettingsError> {
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("postgres://") || lower.starts_with("postgresql://")) {
        return Err(SettingsError::DatabaseUrl("the scheme must be postgres:// or postgresql://".to_owned()));
    }
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut sslmode = None;
    let mut sslrootcert = None;
    let mut rest = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        // As libpq, the last occurrence of a parameter wins.
        let slot = match key {
            "sslmode" => &mut sslmode,
            "sslrootcert" => &mut sslrootcert,
            _ => {
                rest.push(pair);
                continue;
            }
        };
        let decoded = percent_decode_str(value)
            .decode_utf8()
            .map_err(|_| SettingsError::DatabaseUrl(format!("{key} is not valid UTF-8 once percent-decoded")))?;
        *slot = Some(decoded.into_owned());
    }
    let tls =
        DatabaseTls::from_params(sslmode.as_deref(), sslrootcert.as_deref()).map_err(SettingsError::DatabaseTls)?;
    let stripped = if rest.is_empty() { base.to_owned() } else { format!("{base}?{}", rest.join("&")) };
    let mut config =
        tokio_postgres::Config::from_str(&stripped).map_err(|e| SettingsError::DatabaseUrl(e.to_string()))?;
    if config.get_hosts().is_empty() {
        return Err(SettingsError::DatabaseUrl("no host".to_owned()));
    }
    config.ssl_mode(tls.negotiation());
    Ok((config, tls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn settings(vars: &[(&str, &str)]) -> Result<Settings, SettingsError> {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Settings::from_lookup(move |name| map.get(name).cloned())
    }

    #[test]
    fn defaults_follow_the_contract() {
        let c = settings(&[("JWT_PRIVATE_KEY_FILE", "/k.pem")]).expect("valid");
        assert_eq!((c.host.as_str(), c.port), ("0.0.0.0", 8080));
        assert_eq!(c.pool_size, 10);
        assert_eq!(c.acquire_timeout, Duration::from_millis(1000));
        assert_eq!(c.max_lifetime, Duration::from_secs(600));
        assert_eq!(c.idle_timeout, Duration::from_secs(300));
        assert_eq!(c.issuer, "http://localhost:8080");
        assert_eq!(c.audience, "channel-api");
        assert_eq!(c.token_ttl_seconds, 600);
        assert_eq!(c.default_client_id, "public");
        assert_eq!(c.public_keys_file, None);
        assert_eq!(c.refresh_ttl_seconds, 2_592_000);
        assert_eq!(c.login_max_failures, 10);
        assert_eq!(c.login_failure_window_seconds, 300);
        assert_eq!(c.login_ip_max_failures, 100);
        assert_eq!(c.metrics_port, 9091);
        assert_eq!(c.refresh_max_lifetime_seconds, 7_776_000);
        assert_eq!(c.client_address, ClientAddress::default());
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
        assert_eq!(c.max_password_checks, 4 * cores);
        assert_eq!(c.log_level, Level::INFO);
        assert_eq!(c.database.get_dbname(), Some("auth"));
        assert_eq!(c.database.get_ports(), &[5432]);
    }

    #[test]
    fn issuer_must_be_an_absolute_http_url_with_a_host() {
        for good in
            ["http://localhost:8080", "https://auth.example.com/", "https://example.com/tenant/a", "http://[::1]:8080"]
        {
            assert_eq!(settings(&[("JWT_PRIVATE_KEY", "pem"), ("JWT_ISSUER", good)]).expect(good).issuer, good);
        }
        for bad in [
            "localhost:8080",
            "/relative",
            "ftp://example.com",
            "urn:example:issuer",
            "http://",
            "https://example.com/?x=1",
            "https://example.com/?",
            "https://example.com/#top",
            "https://example.com#",
            "not a url",
        ] {
            let err = settings(&[("JWT_PRIVATE_KEY", "pem"), ("JWT_ISSUER", bad)]).expect_err(bad).to_string();
            assert!(err.starts_with("JWT_ISSUER") && !err.contains('\n'), "{bad}: {err}");
        }
    }

    #[test]
    fn default_client_id_follows_the_client_id_rule() {
        let c = settings(&[("JWT_PRIVATE_KEY", "pem"), ("DEFAULT_CLIENT_ID", "my app ~1")]).expect("valid");
        assert_eq!(c.default_client_id, "my app ~1");
        let long = "c".repeat(128);
        assert_eq!(
            settings(&[("JWT_PRIVATE_KEY", "pem"), ("DEFAULT_CLIENT_ID", &long)]).expect("128").default_client_id,
            long
        );
        for bad in ["c".repeat(129), "caf\u{e9}".to_owned(), "tab\there".to_owned()] {
            let err = settings(&[("JWT_PRIVATE_KEY", "pem"), ("DEFAULT_CLIENT_ID", &bad)]).expect_err(&bad).to_string();
            assert!(err.starts_with("DEFAULT_CLIENT_ID"), "{err}");
        }
    }

    #[test]
    fn the_limits_are_read_from_the_environment() {
        let c = settings(&[
            ("JWT_PRIVATE_KEY", "pem"),
            ("REFRESH_TTL_SECONDS", "86400"),
            ("LOGIN_MAX_FAILURES", "1"),
            ("LOGIN_FAILURE_WINDOW_SECONDS", " 60 "),
            ("LOGIN_IP_MAX_FAILURES", "1000000"),
            ("REFRESH_MAX_LIFETIME_SECONDS", "86400"),
            ("TRUSTED_PROXIES", "172.16.0.0/12, fdaa::/16"),
            ("METRICS_PORT", "9100"),
            ("MAX_PASSWORD_CHECKS", "2147483647"),
        ])
        .expect("valid");
        assert_eq!(
            (c.refresh_ttl_seconds, c.login_max_failures, c.login_failure_window_seconds, c.login_ip_max_failures),
            (86400, 1, 60, 1_000_000)
        );
        assert_eq!(c.refresh_max_lifetime_seconds, 86400);
        assert!(c.client_address.is_trusted("172.31.1.1".parse().expect("ip")));
        assert!(c.client_address.is_trusted("fdaa::9".parse().expect("ip")));
        assert!(!c.client_address.is_trusted("192.0.2.1".parse().expect("ip")));
        assert_eq!(c.metrics_port, 9100);
        assert_eq!(c.max_password_checks, 2_147_483_647);
    }

    #[test]
    fn the_limits_must_be_positive_integers() {
        for name in [
            "REFRESH_TTL_SECONDS",
            "REFRESH_MAX_LIFETIME_SECONDS",
            "LOGIN_MAX_FAILURES",
            "LOGIN_FAILURE_WINDOW_SECONDS",
            "LOGIN_IP_MAX_FAILURES",
            "MAX_PASSWORD_CHECKS",
        ] {
            for bad in ["0", "-1", "1.5", "ten", "2147483648", "99999999999999999999", "1e3"] {
                let err = settings(&[("JWT_PRIVATE_KEY", "pem"), (name, bad)]).expect_err(bad).to_string();
                assert!(err.starts_with(name) && !err.contains('\n'), "{name}={bad}: {err}");
            }
        }
    }

    #[test]
    fn trust_proxy_headers_is_refused_as_replaced() {
        for old in ["true", "false", "yes", " 1 "] {
            let err = settings(&[("JWT_PRIVATE_KEY", "pem"), ("TRUST_PROXY_HEADERS", old)]).expect_err(old).to_string();
            assert!(err.starts_with("TRUST_PROXY_HEADERS") && err.contains("TRUSTED_PROXIES"), "{old}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
        for unset in ["", "  "] {
            settings(&[("JWT_PRIVATE_KEY", "pem"), ("TRUST_PROXY_HEADERS", unset)]).expect("empty is unset");
        }
    }

    #[test]
    fn trusted_proxies_are_cidrs_or_addresses() {
        for good in ["", " ", "10.0.0.0/8", "192.0.2.1", "::1", "fdaa::/16, 10.0.0.0/8 ,192.0.2.0/24"] {
            settings(&[("JWT_PRIVATE_KEY", "pem"), ("TRUSTED_PROXIES", good)]).expect(good);
        }
        for bad in ["10.0.0.1/8", "10.0.0.0/33", "fdaa::1/16", "10.0.0.0/8,,::1", "10.0.0.0/8,", "proxy", "10.0.0.0/x"]
        {
            let err = settings(&[("JWT_PRIVATE_KEY", "pem"), ("TRUSTED_PROXIES", bad)]).expect_err(bad).to_string();
            assert!(err.starts_with("TRUSTED_PROXIES") && !err.contains('\n'), "{bad}: {err}");
        }
    }

    #[test]
    fn metrics_port_is_a_port_other_than_port() {
        let key = ("JWT_PRIVATE_KEY", "pem");
        assert_eq!(settings(&[key, ("METRICS_PORT", "1")]).expect("1").metrics_port, 1);
        assert_eq!(settings(&[key, ("METRICS_PORT", "65535")]).expect("65535").metrics_port, 65535);
        assert_eq!(settings(&[key, ("METRICS_PORT", "")]).expect("unset").metrics_port, 9091);
        assert_eq!(settings(&[key, ("PORT", "9091"), ("METRICS_PORT", "8080")]).expect("swapped").metrics_port, 8080);
        for (vars, what) in [
            (&[("METRICS_PORT", "0")][..], "zero"),
            (&[("METRICS_PORT", "65536")], "too big"),
            (&[("METRICS_PORT", "-1")], "negative"),
            (&[("METRICS_PORT", "nine")], "a word"),
            (&[("METRICS_PORT", "8080")], "PORT's default"),
            (&[("PORT", "9091")], "PORT is METRICS_PORT's default"),
            (&[("PORT", "7000"), ("METRICS_PORT", "7000")], "the same"),
        ] {
            let mut all = vars.to_vec();
            all.push(key);
            let err = settings(&all).expect_err(what).to_string();
            assert!(err.starts_with("METRICS_PORT") && !err.contains('\n'), "{what}: {err}");
        }
    }

    #[test]
    fn refresh_max_lifetime_is_not_less_than_the_refresh_ttl() {
        let key = ("JWT_PRIVATE_KEY", "pem");
        let c =
            settings(&[key, ("REFRESH_TTL_SECONDS", "3600"), ("REFRESH_MAX_LIFETIME_SECONDS", "3600")]).expect("equal");
        assert_eq!(c.refresh_max_lifetime_seconds, 3600);
        let c = settings(&[key, ("REFRESH_MAX_LIFETIME_SECONDS", "")]).expect("unset");
        assert_eq!(c.refresh_max_lifetime_seconds, 7_776_000);
        for vars in [
            &[("REFRESH_TTL_SECONDS", "3600"), ("REFRESH_MAX_LIFETIME_SECONDS", "3599")][..],
            &[("REFRESH_MAX_LIFETIME_SECONDS", "2591999")],
            &[("REFRESH_TTL_SECONDS", "7776001")],
        ] {
            let mut all = vars.to_vec();
            all.push(key);
            let err = settings(&all).expect_err(&format!("{vars:?}")).to_string();
            assert!(err.starts_with("REFRESH_MAX_LIFETIME_SECONDS") && !err.contains('\n'), "{vars:?}: {err}");
        }
    }

    #[test]
    fn public_keys_file_is_read_from_the_environment() {
        let c = settings(&[("JWT_PRIVATE_KEY", "pem"), ("JWT_PUBLIC_KEYS_FILE", "/keys.pem")]).expect("valid");
        assert_eq!(c.public_keys_file.as_deref(), Some("/keys.pem"));
    }

    #[test]
    fn missing_key_is_refused_naming_the_variable() {
        let err = settings(&[]).expect_err("refused");
        assert!(err.to_string().contains("JWT_PRIVATE_KEY"));
    }

    #[test]
    fn inline_key_reads_literal_backslash_n_as_a_newline() {
        let flattened = "-----BEGIN PRIVATE KEY-----\\nMIIB\\n-----END PRIVATE KEY-----\\n";
        let real = "-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n";
        for value in [flattened, real] {
            match settings(&[("JWT_PRIVATE_KEY", value)]).expect("valid").key {
                KeySource::Inline(pem) => assert_eq!(pem.trim(), real.trim()),
                other => panic!("{other:?}"),
            }
        }
        let both = settings(&[("JWT_PRIVATE_KEY", real), ("JWT_PRIVATE_KEY_FILE", " /k.pem ")]).expect("valid");
        assert!(matches!(both.key, KeySource::File(ref path) if path == "/k.pem"), "{:?}", both.key);
    }

    #[test]
    fn fly_io_url_with_query_is_accepted() {
        let c = settings(&[
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
            "postgres://auth:secretpw@127.0.0.1:5432/auth?sslmode=bogus",
            "postgres://auth:secretpw@127.0.0.1:5432/auth?sslmode=verify-full",
            "postgres://auth:secretpw@127.0.0.1:5432/auth?nosuchoption=1",
        ] {
            let err = settings(&[("JWT_PRIVATE_KEY", "pem"), ("DATABASE_URL", url)]).expect_err(url);
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
            let err = settings(&[("JWT_PRIVATE_KEY", "pem"), (name, value)]).expect_err(name);
            assert!(err.to_string().contains(name), "{err}");
        }
    }

    fn tls(query: &str) -> Result<DatabaseTls, SettingsError> {
        parse_database_url(&format!("postgres://u:secretpw@db.internal:5432/app{query}")).map(|(_, tls)| tls)
    }

    #[test]
    fn sslmode_has_libpqs_values_and_default() {
        use crate::tls::{RootCert, SslMode};
        use tokio_postgres::config::SslMode as Negotiation;
        let cases = [
            ("", SslMode::Prefer, None, Negotiation::Prefer),
            ("?sslmode=disable", SslMode::Disable, None, Negotiation::Disable),
            ("?sslmode=prefer", SslMode::Prefer, None, Negotiation::Prefer),
            ("?sslmode=require", SslMode::Require, None, Negotiation::Require),
            ("?sslmode=require&sslrootcert=/ca.pem", SslMode::Require, Some("/ca.pem"), Negotiation::Require),
            (
                "?sslrootcert=%2Fetc%2Fca.pem&sslmode=verify-ca",
                SslMode::VerifyCa,
                Some("/etc/ca.pem"),
                Negotiation::Require,
            ),
            ("?sslmode=verify-full&sslrootcert=/ca.pem", SslMode::VerifyFull, Some("/ca.pem"), Negotiation::Require),
            ("?sslmode=require&sslmode=disable", SslMode::Disable, None, Negotiation::Disable),
            ("?application_name=x&sslmode=require&connect_timeout=3", SslMode::Require, None, Negotiation::Require),
        ];
        for (query, mode, root, negotiation) in cases {
            let (config, tls) =
                parse_database_url(&format!("postgres://u:p@db.internal:5432/app{query}")).expect(query);
            assert_eq!(tls.mode, mode, "{query}");
            assert_eq!(tls.root, root.map(|r| RootCert::File(r.to_owned())), "{query}");
            assert_eq!(config.get_ssl_mode(), negotiation, "{query}");
            assert_eq!(config.get_dbname(), Some("app"), "{query}");
        }
        let (config, _) = parse_database_url("postgres://u:p@h/app?application_name=x&connect_timeout=3").expect("ok");
        assert_eq!(config.get_application_name(), Some("x"));
        assert_eq!(config.get_connect_timeout(), Some(&Duration::from_secs(3)));
        let system = tls("?sslrootcert=system").expect("system");
        assert_eq!((system.mode, system.root), (SslMode::VerifyFull, Some(RootCert::System)));
    }

    #[test]
    fn bad_sslmodes_are_refused_in_one_line_naming_the_accepted_values() {
        for (query, words) in [
            ("?sslmode=bogus", &["sslmode", "bogus", "disable", "prefer", "require", "verify-ca", "verify-full"][..]),
            ("?sslmode=allow", &["sslmode", "allow", "verify-full"]),
            ("?sslmode=VERIFY-FULL", &["sslmode", "verify-full"]),
            ("?sslmode=", &["sslmode", "verify-full"]),
            ("?sslmode=verify-full", &["sslmode=verify-full", "sslrootcert"]),
            ("?sslmode=verify-ca", &["sslmode=verify-ca", "sslrootcert"]),
            ("?sslmode=verify-ca&sslrootcert=system", &["sslrootcert=system", "verify-full"]),
            ("?sslmode=require&sslrootcert=system", &["sslrootcert=system", "verify-full"]),
        ] {
            let err = tls(query).expect_err(query).to_string();
            assert!(err.starts_with("DATABASE_URL"), "{err}");
            assert!(!err.contains('\n') && !err.contains("secretpw"), "{err}");
            for word in words {
                assert!(err.contains(word), "{query}: {err} does not name {word}");
            }
        }
    }

    #[test]
    fn pool_lifetimes_are_read_and_empty_is_unset() {
        let key = ("JWT_PRIVATE_KEY_FILE", "/k.pem");
        let c =
            settings(&[key, ("DB_MAX_LIFETIME_SECONDS", "30"), ("DB_IDLE_TIMEOUT_SECONDS", "10")]).expect("minimums");
        assert_eq!((c.max_lifetime, c.idle_timeout), (Duration::from_secs(30), Duration::from_secs(10)));
        let c =
            settings(&[key, ("DB_MAX_LIFETIME_SECONDS", " 1800 "), ("DB_IDLE_TIMEOUT_SECONDS", "1799")]).expect("ok");
        assert_eq!((c.max_lifetime, c.idle_timeout), (Duration::from_secs(1800), Duration::from_secs(1799)));
        let c = settings(&[key, ("DB_MAX_LIFETIME_SECONDS", ""), ("DB_IDLE_TIMEOUT_SECONDS", "")]).expect("unset");
        assert_eq!((c.max_lifetime, c.idle_timeout), (Duration::from_secs(600), Duration::from_secs(300)));
        // The idle timeout is checked against the lifetime in force, the default included.
        let c = settings(&[key, ("DB_IDLE_TIMEOUT_SECONDS", "599")]).expect("under the default lifetime");
        assert_eq!(c.idle_timeout, Duration::from_secs(599));
        let c = settings(&[key, ("DB_MAX_LIFETIME_SECONDS", "301")]).expect("over the default idle timeout");
        assert_eq!(c.max_lifetime, Duration::from_secs(301));
    }

    #[test]
    fn pool_lifetimes_outside_their_rule_are_refused_naming_the_variable() {
        let key = ("JWT_PRIVATE_KEY_FILE", "/k.pem");
        for (vars, name) in [
            (&[("DB_MAX_LIFETIME_SECONDS", "29")][..], "DB_MAX_LIFETIME_SECONDS"),
            (&[("DB_MAX_LIFETIME_SECONDS", "0")], "DB_MAX_LIFETIME_SECONDS"),
            (&[("DB_MAX_LIFETIME_SECONDS", "-600")], "DB_MAX_LIFETIME_SECONDS"),
            (&[("DB_MAX_LIFETIME_SECONDS", "600s")], "DB_MAX_LIFETIME_SECONDS"),
            (&[("DB_MAX_LIFETIME_SECONDS", "1.5")], "DB_MAX_LIFETIME_SECONDS"),
            (&[("DB_MAX_LIFETIME_SECONDS", "2147483648")], "DB_MAX_LIFETIME_SECONDS"),
            (&[("DB_IDLE_TIMEOUT_SECONDS", "9")], "DB_IDLE_TIMEOUT_SECONDS"),
            (&[("DB_IDLE_TIMEOUT_SECONDS", "0")], "DB_IDLE_TIMEOUT_SECONDS"),
            (&[("DB_IDLE_TIMEOUT_SECONDS", "ten")], "DB_IDLE_TIMEOUT_SECONDS"),
            (&[("DB_IDLE_TIMEOUT_SECONDS", "600")], "DB_IDLE_TIMEOUT_SECONDS"),
            (&[("DB_MAX_LIFETIME_SECONDS", "60"), ("DB_IDLE_TIMEOUT_SECONDS", "61")], "DB_IDLE_TIMEOUT_SECONDS"),
            (&[("DB_MAX_LIFETIME_SECONDS", "200")], "DB_IDLE_TIMEOUT_SECONDS"),
        ] {
            let mut all = vars.to_vec();
            all.push(key);
            let err = settings(&all).expect_err(&format!("{vars:?}")).to_string();
            assert!(err.starts_with(name), "{vars:?}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }
}
