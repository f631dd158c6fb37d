//! `GET /metrics`: the contract's families in the Prometheus text format
//! 0.0.4, through the `prometheus` crate.
//!
//! Every series the request path touches is resolved once, at start-up, and
//! kept as a handle: recording is an atomic add, with no label lookup, no
//! lock and no allocation per request. The pool gauges are read from
//! deadpool's `Pool::status()` when scraped.

use std::time::Duration;

use deadpool_postgres::Status;
use prometheus::{
    Encoder as _, Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

use crate::password_hashes::{Scheme, Verification};

pub const TOKEN_REQUESTS: &str = "simpleauth_token_requests_total";
pub const TOKEN_REQUEST_DURATION: &str = "simpleauth_token_request_duration_seconds";
pub const PASSWORD_CHECKS: &str = "simpleauth_password_checks_total";
pub const TOKEN_SIGNING_DURATION: &str = "simpleauth_token_signing_duration_seconds";
pub const DB_POOL_CONNECTIONS: &str = "simpleauth_db_pool_connections";
pub const DB_POOL_PENDING: &str = "simpleauth_db_pool_pending";
pub const DB_POOL_MAX: &str = "simpleauth_db_pool_max";
pub const KEY_RELOADS: &str = "simpleauth_key_reloads_total";
pub const REJECTIONS: &str = "simpleauth_rejections_total";

pub const TOKEN_REQUEST_BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0];
pub const TOKEN_SIGNING_BUCKETS: [f64; 10] = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1];

/// The content type of the text exposition format 0.0.4.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Every answer `POST /token` gives: status, its label, OAuth error code.
const TOKEN_OUTCOMES: [(u16, &str, &str); 9] = [
    (200, "200", "none"),
    (400, "400", "invalid_request"),
    (400, "400", "invalid_grant"),
    (400, "400", "unsupported_grant_type"),
    (413, "413", "invalid_request"),
    (415, "415", "invalid_request"),
    (429, "429", "temporarily_unavailable"),
    (503, "503", "temporarily_unavailable"),
    (500, "500", "server_error"),
];

/// Every (scheme, result) a password verification reports.
const PASSWORD_OUTCOMES: [(Scheme, &str); 8] = [
    (Scheme::Argon2id, "match"),
    (Scheme::Argon2id, "mismatch"),
    (Scheme::Argon2id, "unusable"),
    (Scheme::HmacSha256, "match"),
    (Scheme::HmacSha256, "mismatch"),
    (Scheme::HmacSha256, "unusable"),
    (Scheme::Dummy, "mismatch"),
    (Scheme::Unknown, "unusable"),
];

/// The service's registry and the handles the request path records into.
pub struct Metrics {
    registry: Registry,
    token_requests_by_label: IntCounterVec,
    token_requests: [IntCounter; TOKEN_OUTCOMES.len()],
    token_request_duration: Histogram,
    password_checks: PasswordChecks,
    token_signing_duration: SigningDuration,
    pool_active: IntGauge,
    pool_idle: IntGauge,
    pool_pending: IntGauge,
    pool_max: IntGauge,
    key_reloads: KeyReloads,
    rejections: Rejections,
}

/// The refusals of contract §7 and §8, all four present from the start.
#[derive(Clone)]
pub struct Rejections {
    username_locked: IntCounter,
    address_locked: IntCounter,
    overload: IntCounter,
    refresh_reuse: IntCounter,
}

impl Rejections {
    /// A 429 of the username lock.
    pub fn username_locked(&self) {
        self.username_locked.inc();
    }

    /// A 429 of the client-address lock.
    pub fn address_locked(&self) {
        self.address_locked.inc();
    }

    /// A 503 of the MAX_PASSWORD_CHECKS limit.
    pub fn overload(&self) {
        self.overload.inc();
    }

    /// A family revoked because one of its used tokens came back.
    pub fn refresh_reuse(&self) {
        self.refresh_reuse.inc();
    }
}

/// The key-reload counters (SIGHUP), both present from the start.
#[derive(Clone)]
pub struct KeyReloads {
    success: IntCounter,
    failure: IntCounter,
}

impl KeyReloads {
    pub fn success(&self) {
        self.success.inc();
    }

    pub fn failure(&self) {
        self.failure.inc();
    }
}

/// The password-check counters, handed to the `PasswordVerifier`.
#[derive(Clone)]
pub struct PasswordChecks {
    counters: [IntCounter; PASSWORD_OUTCOMES.len()],
}

/// The signing histogram, handed to the `TokenService`.
#[derive(Clone)]
pub struct SigningDuration(Histogram);

impl SigningDuration {
    /// One token pair signed in `elapsed`.
    pub fn observe(&self, elapsed: Duration) {
        self.0.observe(elapsed.as_secs_f64());
    }
}

impl Metrics {
    /// Registers the contract's families on a registry of the service's own
    /// (not the crate's process-wide default one, so tests are independent).
    pub fn new() -> Result<Self, prometheus::Error> {
        let registry = Registry::new();
        let token_requests_by_label = IntCounterVec::new(
            Opts::new(TOKEN_REQUESTS, "Responses to POST /token by HTTP status and OAuth error code"),
            &["status", "error"],
        )?;
        let token_request_duration = Histogram::with_opts(
            HistogramOpts::new(TOKEN_REQUEST_DURATION, "Time to handle one POST /token")
                .buckets(TOKEN_REQUEST_BUCKETS.to_vec()),
        )?;
        let password_checks = IntCounterVec::new(
            Opts::new(PASSWORD_CHECKS, "Password verifications by stored scheme and result"),
            &["scheme", "result"],
        )?;
        let token_signing_duration = Histogram::with_opts(
            HistogramOpts::new(TOKEN_SIGNING_DURATION, "Time to sign one token pair (access and ID token)")
                .buckets(TOKEN_SIGNING_BUCKETS.to_vec()),
        )?;
        let pool_connections =
            IntGaugeVec::new(Opts::new(DB_POOL_CONNECTIONS, "Database connections of the pool by state"), &["state"])?;
        let pool_pending = IntGauge::new(DB_POOL_PENDING, "Callers waiting for a database connection")?;
        let pool_max = IntGauge::new(DB_POOL_MAX, "Most database connections the pool opens")?;
        let key_reloads =
            IntCounterVec::new(Opts::new(KEY_RELOADS, "Reloads of the keys on SIGHUP by result"), &["result"])?;
        let rejections = IntCounterVec::new(
            Opts::new(
                REJECTIONS,
                "Requests refused by a login limit or the overload limit, and families revoked for reuse",
            ),
            &["reason"],
        )?;

        registry.register(Box::new(token_requests_by_label.clone()))?;
        registry.register(Box::new(token_request_duration.clone()))?;
        registry.register(Box::new(password_checks.clone()))?;
        registry.register(Box::new(token_signing_duration.clone()))?;
        registry.register(Box::new(pool_connections.clone()))?;
        registry.register(Box::new(pool_pending.clone()))?;
        registry.register(Box::new(pool_max.clone()))?;
        registry.register(Box::new(key_reloads.clone()))?;
        registry.register(Box::new(rejections.clone()))?;

        Ok(Metrics {
            registry,
            token_requests: TOKEN_OUTCOMES
                .map(|(_, status, error)| token_requests_by_label.with_label_values(&[status, error])),
            token_requests_by_label,
            token_request_duration,
            password_checks: PasswordChecks {
                counters: PASSWORD_OUTCOMES
                    .map(|(scheme, result)| password_checks.with_label_values(&[scheme.label(), result])),
            },
            token_signing_duration: SigningDuration(token_signing_duration),
            pool_active: pool_connections.with_label_values(&["active"]),
            pool_idle: pool_connections.with_label_values(&["idle"]),
            pool_pending,
            pool_max,
            key_reloads: KeyReloads {
                success: key_reloads.with_label_values(&["success"]),
                failure: key_reloads.with_label_values(&["failure"]),
            },
            rejections: Rejections {
                username_locked: rejections.with_label_values(&["username_locked"]),
                address_locked: rejections.with_label_values(&["address_locked"]),
                overload: rejections.with_label_values(&["overload"]),
                refresh_reuse: rejections.with_label_values(&["refresh_reuse"]),
            },
        })
    }

    /// One `POST /token` answered with `status` and the OAuth error code
    /// `error` (`"none"` for a 200), after `elapsed`.
    pub fn token_request(&self, status: u16, error: &str, elapsed: Duration) {
        match TOKEN_OUTCOMES.iter().position(|(s, _, e)| *s == status && *e == error) {
            Some(i) => self.token_requests[i].inc(),
            // Not an answer the token endpoint gives today; counted all the same.
            None => self.token_requests_by_label.with_label_values(&[status.to_string().as_str(), error]).inc(),
        }
        self.token_request_duration.observe(elapsed.as_secs_f64());
    }

    pub fn signing_duration(&self) -> SigningDuration {
        self.token_signing_duration.clone()
    }

    pub fn key_reloads(&self) -> KeyReloads {
        self.key_reloads.clone()
    }

    pub fn rejections(&self) -> Rejections {
        self.rejections.clone()
    }

    pub fn password_checks(&self) -> PasswordChecks {
        self.password_checks.clone()
    }

    /// The exposition text, with the pool gauges read from `pool` first.
    pub fn render(&self, pool: Status) -> Vec<u8> {
        let idle = pool.available;
        self.pool_active.set(pool.size.saturating_sub(idle) as i64);
        self.pool_idle.set(idle as i64);
        self.pool_pending.set(pool.waiting as i64);
        self.pool_max.set(pool.max_size as i64);
        let mut text = Vec::with_capacity(4096);
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut text) {
            tracing::error!("metrics could not be rendered: {e}");
        }
        text
    }
}

impl PasswordChecks {
    pub fn record(&self, scheme: Scheme, verification: Verification) {
        let result = match verification {
            Verification::Match => "match",
            Verification::Mismatch => "mismatch",
            Verification::Unusable(_) => "unusable",
        };
        if let Some(i) = PASSWORD_OUTCOMES.iter().position(|(s, r)| *s == scheme && *r == result) {
            self.counters[i].inc();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api_error::{ApiError, Lock};

    /// What the `POST /token` middleware records for an error answer.
    fn record(metrics: &Metrics, err: ApiError, elapsed: Duration) {
        metrics.token_request(err.status(), err.code(), elapsed);
    }

    fn status(size: usize, available: usize, waiting: usize) -> Status {
        Status { max_size: 10, size, available, waiting }
    }

    fn text(metrics: &Metrics) -> String {
        String::from_utf8(metrics.render(status(3, 1, 2))).expect("utf-8")
    }

    #[test]
    fn families_have_the_contracts_names_types_and_buckets() {
        let text = text(&Metrics::new().expect("metrics"));
        for line in [
            "# TYPE simpleauth_token_requests_total counter",
            "# TYPE simpleauth_password_checks_total counter",
            "# TYPE simpleauth_token_request_duration_seconds histogram",
            "# TYPE simpleauth_token_signing_duration_seconds histogram",
            "# TYPE simpleauth_db_pool_connections gauge",
            "# TYPE simpleauth_db_pool_pending gauge",
            "# TYPE simpleauth_db_pool_max gauge",
            "# TYPE simpleauth_key_reloads_total counter",
            "# TYPE simpleauth_rejections_total counter",
            r#"simpleauth_rejections_total{reason="username_locked"} 0"#,
            r#"simpleauth_rejections_total{reason="address_locked"} 0"#,
            r#"simpleauth_rejections_total{reason="overload"} 0"#,
            r#"simpleauth_rejections_total{reason="refresh_reuse"} 0"#,
            r#"simpleauth_token_requests_total{error="temporarily_unavailable",status="429"} 0"#,
            r#"simpleauth_key_reloads_total{result="success"} 0"#,
            r#"simpleauth_key_reloads_total{result="failure"} 0"#,
            r#"simpleauth_token_request_duration_seconds_bucket{le="0.001"} 0"#,
            r#"simpleauth_token_request_duration_seconds_bucket{le="5"} 0"#,
            r#"simpleauth_token_request_duration_seconds_bucket{le="+Inf"} 0"#,
            r#"simpleauth_token_signing_duration_seconds_bucket{le="0.0001"} 0"#,
            r#"simpleauth_token_signing_duration_seconds_bucket{le="0.1"} 0"#,
            r#"simpleauth_db_pool_connections{state="active"} 2"#,
            r#"simpleauth_db_pool_connections{state="idle"} 1"#,
            "simpleauth_db_pool_pending 2",
            "simpleauth_db_pool_max 10",
            r#"simpleauth_token_requests_total{error="none",status="200"} 0"#,
            r#"simpleauth_password_checks_total{result="mismatch",scheme="dummy"} 0"#,
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
        let buckets = |name: &str| text.lines().filter(|l| l.starts_with(&format!("{name}_bucket{{"))).count();
        assert_eq!(buckets(TOKEN_REQUEST_DURATION), TOKEN_REQUEST_BUCKETS.len() + 1);
        assert_eq!(buckets(TOKEN_SIGNING_DURATION), TOKEN_SIGNING_BUCKETS.len() + 1);
    }

    #[test]
    fn each_outcome_moves_its_own_series() {
        let metrics = Metrics::new().expect("metrics");
        metrics.token_request(200, "none", Duration::from_millis(3));
        record(&metrics, ApiError::PayloadTooLarge, Duration::from_micros(50));
        record(&metrics, ApiError::InvalidGrant, Duration::from_millis(30));
        metrics.signing_duration().observe(Duration::from_micros(600));
        metrics.password_checks().record(Scheme::Dummy, Verification::Mismatch);
        metrics.password_checks().record(Scheme::Unknown, Verification::Unusable("x"));
        metrics.key_reloads().failure();
        metrics.rejections().refresh_reuse();
        metrics.rejections().address_locked();
        metrics.rejections().address_locked();
        record(&metrics, ApiError::TooManyFailures { lock: Lock::Address, retry_after: 3 }, Duration::from_micros(20));
        record(&metrics, ApiError::Overloaded, Duration::from_micros(20));
        record(&metrics, ApiError::InvalidRefreshToken, Duration::from_micros(20));
        let text = text(&metrics);
        for line in [
            r#"simpleauth_token_requests_total{error="none",status="200"} 1"#,
            r#"simpleauth_token_requests_total{error="invalid_request",status="413"} 1"#,
            r#"simpleauth_token_requests_total{error="invalid_grant",status="400"} 2"#,
            r#"simpleauth_token_requests_total{error="invalid_request",status="400"} 0"#,
            r#"simpleauth_token_requests_total{error="temporarily_unavailable",status="429"} 1"#,
            r#"simpleauth_token_requests_total{error="temporarily_unavailable",status="503"} 1"#,
            r#"simpleauth_rejections_total{reason="refresh_reuse"} 1"#,
            r#"simpleauth_rejections_total{reason="address_locked"} 2"#,
            r#"simpleauth_rejections_total{reason="username_locked"} 0"#,
            r#"simpleauth_rejections_total{reason="overload"} 0"#,
            r#"simpleauth_password_checks_total{result="mismatch",scheme="dummy"} 1"#,
            r#"simpleauth_password_checks_total{result="unusable",scheme="unknown"} 1"#,
            r#"simpleauth_token_request_duration_seconds_bucket{le="0.001"} 4"#,
            r#"simpleauth_token_request_duration_seconds_bucket{le="0.005"} 5"#,
            r#"simpleauth_token_request_duration_seconds_bucket{le="0.05"} 6"#,
            "simpleauth_token_request_duration_seconds_count 6",
            r#"simpleauth_token_signing_duration_seconds_bucket{le="0.0005"} 0"#,
            r#"simpleauth_token_signing_duration_seconds_bucket{le="0.001"} 1"#,
            "simpleauth_token_signing_duration_seconds_count 1",
            r#"simpleauth_key_reloads_total{result="success"} 0"#,
            r#"simpleauth_key_reloads_total{result="failure"} 1"#,
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
    }

    #[test]
    fn every_token_error_has_a_registered_series() {
        let errors = [
            ApiError::InvalidRequest("x"),
            ApiError::UnsupportedGrantType,
            ApiError::InvalidGrant,
            ApiError::InvalidRefreshToken,
            ApiError::TooManyFailures { lock: Lock::Username, retry_after: 1 },
            ApiError::PayloadTooLarge,
            ApiError::UnsupportedMediaType,
            ApiError::DatabaseUnavailable,
            ApiError::Overloaded,
            ApiError::Internal,
        ];
        for err in errors {
            let key = (err.status(), err.code());
            assert!(TOKEN_OUTCOMES.iter().any(|(s, label, e)| (*s, *e) == key && *label == s.to_string()), "{key:?}");
        }
    }
}
