//! `AppState`: the service's parts, wired once at start-up and shared by every
//! request (actix: `web::Data`; axum: the router's state): web →
//! `TokenService` → `UserRepository` / `SessionRepository` /
//! `PasswordVerifier` / `AddressLimiter` / `KeyRing` (the `TokenSigner` and the
//! documents of the keys in service), with `DatabaseHealth` and `Metrics`
//! beside.

use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::Pool;

use crate::address_limiter::AddressLimiter;
use crate::client_address::ClientAddress;
use crate::database_health::DatabaseHealth;
use crate::key_set::KeyRing;
use crate::metrics::Metrics;
use crate::outage_log::OutageLog;
use crate::password_verifier::PasswordVerifier;
use crate::session_repository::SessionRepository;
use crate::settings::Settings;
use crate::token_service::{Database, TokenService};
use crate::user_repository::UserRepository;

pub struct AppState {
    pub tokens: TokenService,
    pub health: DatabaseHealth,
    /// The signer, JWK set and discovery document in service; swapped on SIGHUP.
    pub keys: Arc<KeyRing>,
    pub metrics: Metrics,
    /// Where a request's client address comes from (TRUSTED_PROXIES).
    pub client_address: ClientAddress,
}

impl AppState {
    /// `cores`: argon2id runs at the same time, at most.
    pub fn new(pool: Pool, keys: Arc<KeyRing>, settings: &Settings, metrics: Metrics, cores: usize) -> Self {
        let outage = OutageLog::default();
        let window = settings.login_failure_window_seconds;
        let tokens = TokenService::new(
            Database {
                users: UserRepository::new(pool.clone(), outage.clone(), settings.login_max_failures, window),
                sessions: SessionRepository::new(
                    pool.clone(),
                    outage.clone(),
                    settings.refresh_ttl_seconds,
                    settings.refresh_max_lifetime_seconds,
                ),
            },
            PasswordVerifier::new(cores, settings.max_password_checks, metrics.password_checks()),
            AddressLimiter::new(
                u32::try_from(settings.login_ip_max_failures).unwrap_or(u32::MAX),
                Duration::from_secs(u64::try_from(window).unwrap_or(1)),
            ),
            Arc::clone(&keys),
            &settings.default_client_id,
            metrics.signing_duration(),
            metrics.rejections(),
        );
        AppState {
            tokens,
            health: DatabaseHealth::new(pool, outage),
            keys,
            metrics,
            client_address: settings.client_address.clone(),
        }
    }
}
