//! `TokenService`: the login flow, lookup → verify → issue.

use std::sync::Arc;
use std::time::Instant;

use crate::errors::ApiError;
use crate::key_set::Keys;
use crate::metrics::SigningDuration;
use crate::password_hashes::Verification;
use crate::password_verifier::PasswordVerifier;
use crate::token_request::TokenRequest;
use crate::token_signer::TokenPair;
use crate::unusable_hash_log::UnusableHashLog;
use crate::user_repository::UserRepository;

pub struct TokenService {
    users: UserRepository,
    passwords: PasswordVerifier,
    keys: Arc<Keys>,
    /// The access token's `client_id` when the request names none.
    default_client_id: Arc<str>,
    unusable_hashes: UnusableHashLog,
    signing_duration: SigningDuration,
}

impl TokenService {
    pub fn new(
        users: UserRepository,
        passwords: PasswordVerifier,
        keys: Arc<Keys>,
        default_client_id: &str,
        signing_duration: SigningDuration,
    ) -> Self {
        TokenService {
            users,
            passwords,
            keys,
            default_client_id: default_client_id.into(),
            unusable_hashes: UnusableHashLog::default(),
            signing_duration,
        }
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

        // The two signatures (~0.5 ms of CPU for RSA-2048) run on the blocking
        // pool: on a worker they would hold up its other tasks, among them
        // tasks holding a pooled connection until polled again (README,
        // "Signing off the workers"). Both tokens come from one snapshot of
        // the keys, so a reload never splits a pair.
        let keys = self.keys.current();
        let client_id = match request.client_id {
            Some(client_id) => Arc::from(client_id),
            None => Arc::clone(&self.default_client_id),
        };
        let (pair, signing_time) = actix_web::web::block(move || {
            let started = Instant::now();
            (keys.signer.issue(&user, &client_id), started.elapsed())
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
