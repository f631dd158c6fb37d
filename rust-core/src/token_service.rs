//! `TokenService`: the two grants and the revocation, in the order of checks
//! of spec/README.md.
//!
//! - Password grant: client-address limit → user and username lock (one
//!   query) → overload (a shed check is a failure of the address) → password
//!   → on failure the two failure counts, on success a new session (family)
//!   with its first refresh token → sign.
//! - Refresh grant: token shape → rotate (or, for a used token, revoke its
//!   family) → sign for the user as the database has it now.
//! - Revoke: the family of a well-formed token.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use uuid::Uuid;

use crate::address_limiter::AddressLimiter;
use crate::api_error::{ApiError, Lock};
use crate::key_set::KeyRing;
use crate::metrics::{Rejections, SigningDuration};
use crate::password_hashes::{Verification, unusable_reason};
use crate::password_verifier::PasswordVerifier;
use crate::refresh_token::RefreshToken;
use crate::session_repository::SessionRepository;
use crate::token_request::{Grant, RevokeRequest, TokenRequest};
use crate::token_signer::TokenPair;
use crate::unusable_hash_log::UnusableHashLog;
use crate::user::User;
use crate::user_repository::{Login, UserRepository};

/// What a successful grant answers: the signed pair and the session's new refresh token.
#[derive(Debug)]
pub struct IssuedTokens {
    pub pair: TokenPair,
    pub refresh_token: RefreshToken,
}

impl IssuedTokens {
    /// The JSON body of the 200 answer.
    pub fn body(&self) -> Result<Vec<u8>, ApiError> {
        serde_json::to_vec(&TokenResponse::from(self)).map_err(|_| ApiError::Internal)
    }
}

/// The success body of `POST /token`: exactly the contract's five members.
#[derive(Debug, Serialize)]
pub struct TokenResponse<'a> {
    pub access_token: &'a str,
    pub id_token: &'a str,
    pub token_type: &'static str,
    pub expires_in: u64,
    pub refresh_token: &'a str,
}

impl<'a> TokenResponse<'a> {
    pub fn new(pair: &'a TokenPair, refresh_token: &'a RefreshToken) -> Self {
        TokenResponse {
            access_token: &pair.access_token,
            id_token: &pair.id_token,
            token_type: "Bearer",
            expires_in: pair.expires_in,
            refresh_token: refresh_token.as_str(),
        }
    }
}

impl<'a> From<&'a IssuedTokens> for TokenResponse<'a> {
    fn from(issued: &'a IssuedTokens) -> Self {
        TokenResponse::new(&issued.pair, &issued.refresh_token)
    }
}

pub struct TokenService {
    users: UserRepository,
    sessions: SessionRepository,
    passwords: PasswordVerifier,
    /// The per-address limit (in memory, this instance only).
    pub addresses: AddressLimiter,
    keys: Arc<KeyRing>,
    /// The access token's `client_id` when the request names none.
    default_client_id: Arc<str>,
    unusable_hashes: UnusableHashLog,
    signing_duration: SigningDuration,
    rejections: Rejections,
}

impl TokenService {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        users: UserRepository,
        sessions: SessionRepository,
        passwords: PasswordVerifier,
        addresses: AddressLimiter,
        keys: Arc<KeyRing>,
        default_client_id: &str,
        signing_duration: SigningDuration,
        rejections: Rejections,
    ) -> Self {
        TokenService {
            users,
            sessions,
            passwords,
            addresses,
            keys,
            default_client_id: default_client_id.into(),
            unusable_hashes: UnusableHashLog::default(),
            signing_duration,
            rejections,
        }
    }

    /// `POST /token`, either grant; `address` is the client's (`ClientAddress`).
    pub async fn issue(&self, request: TokenRequest, address: Option<IpAddr>) -> Result<IssuedTokens, ApiError> {
        let TokenRequest { grant, client_id } = request;
        match grant {
            Grant::Password { username, password } => self.password_grant(username, password, client_id, address).await,
            Grant::RefreshToken { refresh_token } => self.refresh_grant(&refresh_token, client_id).await,
        }
    }

    /// Unknown user, wrong password and unusable stored hash cost the same
    /// (one argon2id run) and fail alike (`InvalidGrant`), each counted as a
    /// failure of the username and of the address.
    async fn password_grant(
        &self,
        username: String,
        password: String,
        client_id: Option<String>,
        address: Option<IpAddr>,
    ) -> Result<IssuedTokens, ApiError> {
        if let Some(address) = address
            && let Err(retry_after) = self.addresses.check(address, Instant::now())
        {
            self.rejections.address_locked();
            return Err(ApiError::TooManyFailures { lock: Lock::Address, retry_after });
        }
        let user = match self.users.find_by_email(&username).await? {
            Login::Locked { retry_after } => {
                self.rejections.username_locked();
                return Err(ApiError::TooManyFailures { lock: Lock::Username, retry_after });
            }
            Login::Unknown => {
                self.shed(self.passwords.verify_unknown_user(password).await, address)?;
                None
            }
            Login::User(mut user) => {
                let stored = std::mem::take(&mut user.password_hash);
                match self.shed(self.passwords.verify(password, stored).await, address)? {
                    Verification::Match => Some(user),
                    Verification::Mismatch => None,
                    Verification::Unusable(reason) => {
                        self.unusable_hashes.report(user.id, reason);
                        None
                    }
                }
            }
        };
        let Some(user) = user else {
            if let Some(address) = address {
                self.addresses.record_failure(address, Instant::now());
            }
            self.users.count_failure(&username).await?;
            return Err(ApiError::InvalidGrant);
        };

        let client_id = match client_id {
            Some(client_id) => Arc::from(client_id),
            None => Arc::clone(&self.default_client_id),
        };
        let family = Uuid::new_v4();
        let refresh_token = new_refresh_token()?;
        self.sessions.start(&username, &refresh_token.hash(), family, user.id, &client_id).await?;
        let pair = self.sign(user, client_id, family).await?;
        Ok(IssuedTokens { pair, refresh_token })
    }

    /// No password is checked and no login limit applies: one rotation (a
    /// second statement for a token that was used before).
    async fn refresh_grant(&self, presented: &str, client_id: Option<String>) -> Result<IssuedTokens, ApiError> {
        let Some(presented) = RefreshToken::parse(presented) else {
            return Err(ApiError::InvalidRefreshToken);
        };
        let presented = presented.hash();
        let next = new_refresh_token()?;
        let Some(rotated) = self.sessions.rotate(&presented, client_id.as_deref(), &next.hash()).await? else {
            // Unknown, expired, revoked, another client's — or used before:
            // then its family ends, for the thief and the user alike.
            if self.sessions.revoke_reused(&presented).await? > 0 {
                self.rejections.refresh_reuse();
            }
            return Err(ApiError::InvalidRefreshToken);
        };
        let mut user = rotated.user;
        if unusable_reason(&std::mem::take(&mut user.password_hash)).is_some() {
            // A disabled (or broken) user: the presented token is used now, so
            // this revokes the family.
            self.sessions.revoke_reused(&presented).await?;
            return Err(ApiError::InvalidRefreshToken);
        }
        let pair = self.sign(user, Arc::from(rotated.client_id), rotated.family).await?;
        Ok(IssuedTokens { pair, refresh_token: next })
    }

    /// `POST /revoke`: the family of a well-formed token; any other value is
    /// not asked of the database. The answer is the same either way.
    pub async fn revoke(&self, request: RevokeRequest) -> Result<(), ApiError> {
        match RefreshToken::parse(&request.token) {
            Some(token) => self.sessions.revoke(&token.hash()).await,
            None => Ok(()),
        }
    }

    /// A check shed by the MAX_PASSWORD_CHECKS limit is counted as a
    /// rejection and as a failure of the client's address (spec/README.md
    /// §8): an address that keeps sending logins this instance cannot afford
    /// to check is locked as a guesser's is, without waiting for checks to
    /// finish. Not a failure of the username (that would be a write per shed
    /// request).
    pub(crate) fn shed<T>(&self, result: Result<T, ApiError>, address: Option<IpAddr>) -> Result<T, ApiError> {
        if matches!(result, Err(ApiError::Overloaded)) {
            self.rejections.overload();
            if let Some(address) = address {
                self.addresses.record_failure(address, Instant::now());
            }
        }
        result
    }

    /// The two signatures (~0.5 ms of CPU for RSA-2048) run on tokio's
    /// blocking pool, as argon2id does: on a runtime worker they would hold up
    /// the tasks queued behind them, among them tasks holding a pooled
    /// connection until polled again (README, "Signing on the blocking pool").
    /// Both tokens come from one snapshot of the keys, so a reload never
    /// splits a pair.
    async fn sign(&self, user: User, client_id: Arc<str>, sid: Uuid) -> Result<TokenPair, ApiError> {
        let keys = self.keys.current();
        let (pair, signing_time) = tokio::task::spawn_blocking(move || {
            let started = Instant::now();
            (keys.signer.issue(&user, &client_id, sid), started.elapsed())
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

fn new_refresh_token() -> Result<RefreshToken, ApiError> {
    RefreshToken::generate().map_err(|e| {
        tracing::error!("{e}");
        ApiError::Internal
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::app_state;

    #[test]
    fn a_shed_check_is_a_failure_of_its_address_only() {
        let state = app_state(
            &[("LOGIN_IP_MAX_FAILURES", "2"), ("LOGIN_FAILURE_WINDOW_SECONDS", "60")],
            "simple-auth-core-test",
        );
        let tokens = &state.tokens;
        let flooding: IpAddr = "192.0.2.9".parse().expect("ip");
        let other: IpAddr = "192.0.2.10".parse().expect("ip");
        let now = Instant::now();
        // An answer that was not shed counts nothing here (an invalid_grant is counted by the grant itself).
        assert!(matches!(
            tokens.shed(Err::<(), _>(ApiError::InvalidGrant), Some(flooding)),
            Err(ApiError::InvalidGrant)
        ));
        assert!(tokens.shed(Ok(()), Some(flooding)).is_ok());
        assert!(tokens.addresses.check(flooding, now).is_ok());
        for _ in 0..2 {
            assert!(matches!(
                tokens.shed(Err::<(), _>(ApiError::Overloaded), Some(flooding)),
                Err(ApiError::Overloaded)
            ));
        }
        assert!(tokens.addresses.check(flooding, now).is_err(), "two shed checks lock the address");
        assert!(tokens.addresses.check(other, now).is_ok(), "and no other");
        // No address (an untracked client): shed, counted as a rejection, nothing to lock.
        assert!(matches!(tokens.shed(Err::<(), _>(ApiError::Overloaded), None), Err(ApiError::Overloaded)));
        let text = String::from_utf8(state.metrics.render(state.health.pool_status())).expect("utf-8");
        let line = r#"simpleauth_rejections_total{reason="overload"} 3"#;
        assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
    }

    #[test]
    fn the_token_response_has_the_contracts_five_members_in_order() {
        let token = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"; // spec/vectors.json
        let pair = TokenPair { access_token: "a.b.c".into(), id_token: "d.e.f".into(), expires_in: 600 };
        let issued = IssuedTokens { pair, refresh_token: RefreshToken::parse(token).expect("shape") };
        let expected = format!(
            r#"{{"access_token":"a.b.c","id_token":"d.e.f","token_type":"Bearer","expires_in":600,"refresh_token":"{token}"}}"#
        );
        assert_eq!(issued.body().expect("json"), expected.as_bytes());
    }
}
