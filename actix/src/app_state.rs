//! `AppState`: the service's parts, wired once at start-up and shared by every
//! worker: web → `TokenService` → `UserRepository` / `PasswordVerifier` /
//! `TokenSigner`, with `DatabaseHealth` and `Metrics` beside.

use std::sync::Arc;

use actix_web::web::Bytes;
use deadpool_postgres::Pool;

use crate::database_health::DatabaseHealth;
use crate::database_outage::DatabaseOutage;
use crate::metrics::Metrics;
use crate::password_verifier::PasswordVerifier;
use crate::token_service::TokenService;
use crate::token_signer::TokenSigner;
use crate::user_repository::UserRepository;

pub struct AppState {
    pub tokens: TokenService,
    pub health: DatabaseHealth,
    /// The JWK set's body, built once.
    pub jwks: Bytes,
    pub metrics: Metrics,
}

impl AppState {
    /// `argon2id_at_once`: password checks running at the same time, at most.
    pub fn new(pool: Pool, signer: TokenSigner, metrics: Metrics, argon2id_at_once: usize) -> Self {
        let outage = DatabaseOutage::default();
        let jwks = Bytes::copy_from_slice(signer.jwks_json());
        let tokens = TokenService::new(
            UserRepository::new(pool.clone(), outage.clone()),
            PasswordVerifier::new(argon2id_at_once, metrics.password_checks()),
            Arc::new(signer),
            metrics.signing_duration(),
        );
        AppState { tokens, health: DatabaseHealth::new(pool, outage), jwks, metrics }
    }
}
