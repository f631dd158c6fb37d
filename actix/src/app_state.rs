//! `AppState`: the service's parts, wired once at start-up and shared by every
//! worker: web → `TokenService` → `UserRepository` / `PasswordVerifier` /
//! `Keys` (the `TokenSigner` and the documents of the keys in service), with
//! `DatabaseHealth` and `Metrics` beside.

use std::sync::Arc;

use deadpool_postgres::Pool;

use crate::database_health::DatabaseHealth;
use crate::database_outage::DatabaseOutage;
use crate::key_set::Keys;
use crate::metrics::Metrics;
use crate::password_verifier::PasswordVerifier;
use crate::token_service::TokenService;
use crate::user_repository::UserRepository;

pub struct AppState {
    pub tokens: TokenService,
    pub health: DatabaseHealth,
    /// The signer, JWK set and discovery document in service; swapped on SIGHUP.
    pub keys: Arc<Keys>,
    pub metrics: Metrics,
}

impl AppState {
    /// `argon2id_at_once`: password checks running at the same time, at most.
    /// `default_client_id`: the access token's `client_id` when a request names none.
    pub fn new(
        pool: Pool,
        keys: Arc<Keys>,
        default_client_id: &str,
        metrics: Metrics,
        argon2id_at_once: usize,
    ) -> Self {
        let outage = DatabaseOutage::default();
        let tokens = TokenService::new(
            UserRepository::new(pool.clone(), outage.clone()),
            PasswordVerifier::new(argon2id_at_once, metrics.password_checks()),
            Arc::clone(&keys),
            default_client_id,
            metrics.signing_duration(),
        );
        AppState { tokens, health: DatabaseHealth::new(pool, outage), keys, metrics }
    }
}
