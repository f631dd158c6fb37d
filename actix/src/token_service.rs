//! `TokenService`: the login flow, lookup → verify → issue.

use std::sync::Arc;
use std::time::Instant;

use crate::errors::ApiError;
use crate::metrics::SigningDuration;
use crate::password_hashes::Verification;
use crate::password_verifier::PasswordVerifier;
use crate::token_request::TokenRequest;
use crate::token_signer::{TokenPair, TokenSigner};
use crate::unusable_hash_log::UnusableHashLog;
use crate::user_repository::UserRepository;

pub struct TokenService {
    users: UserRepository,
    passwords: PasswordVerifier,
    signer: Arc<TokenSigner>,
    unusable_hashes: UnusableHashLog,
    signing_duration: SigningDuration,
}

impl TokenService {
    pub fn new(
        users: UserRepository,
        passwords: PasswordVerifier,
        signer: Arc<TokenSigner>,
        signing_duration: SigningDuration,
    ) -> Self {
        TokenService { users, passwords, signer, unusable_hashes: UnusableHashLog::default(), signing_duration }
    }

    /// The password grant. Unknown user, wrong password and unusable stored
    /// hash cost the same (one argon2id run) and fail alike (`InvalidGrant`).
    pub async fn issue(&self, request: TokenRequest) -> Result<TokenPair, ApiError> {
        let Some(mut user) = self.users.find_by_email(&request.username).await? else {
            self.passwords.verify_unknown_user(request.password).await?;
            return Err(ApiError::InvalidGrant);
        };
        match self.passwords.verify(request.password, std::mem::take(&mut user.password_hash)).await? {
            Verification::Match => {}
            Verification::Mismatch => return Err(ApiError::InvalidGrant),
            Verification::Unusable(reason) => {
                self.unusable_hashes.report(user.id, reason);
                return Err(ApiError::InvalidGrant);
            }
        }

        // The two RSA signatures (~0.5 ms of CPU) run on the blocking pool: on
        // a worker they would hold up its other tasks, among them tasks holding
        // a pooled connection until polled again (README, "Signing off the
        // workers").
        let signer = Arc::clone(&self.signer);
        let (pair, signing_time) = actix_web::web::block(move || {
            let started = Instant::now();
            (signer.issue(&user), started.elapsed())
        })
        .await
        .map_err(|e| {
            tracing::error!("signing task failed: {e}");
            ApiError::Internal
        })?;
        let pair = pair.map_err(|e| {
            tracing::error!("signing failed: {e}");
            ApiError::Internal
        })?;
        self.signing_duration.observe(signing_time);
        Ok(pair)
    }
}
