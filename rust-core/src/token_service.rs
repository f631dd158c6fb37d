//! `TokenService`: the two grants and the revocation, in the order of checks
//! of spec/README.md §8.
//!
//! - Password grant: reserve one attempt of the client's address → reserve
//!   one of the username and read the user (statement L) → the check, every
//!   argon2id run under a MAX_PASSWORD_CHECKS permit (none free: shed, and the
//!   username's attempt given back, statement G) → on a match the session and
//!   its first refresh token, only if the stored hash is still the one
//!   verified (statement S) → sign. A failure keeps both reservations (they
//!   are the failure counts); anything but a failure or a shed grant gives
//!   the address's back.
//! - Refresh grant: token shape → rotate (R; or, for a used token, revoke its
//!   family, U) → sign for the user as the database has it now.
//! - Revoke: the family of a well-formed token (V).

use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use uuid::Uuid;

use crate::address_limiter::{AddressLimiter, Reservation};
use crate::api_error::{ApiError, Lock};
use crate::key_set::KeyRing;
use crate::metrics::{Rejections, SigningDuration};
use crate::password_hashes::{Verification, unusable_reason};
use crate::password_verifier::PasswordVerifier;
use crate::refresh_token::RefreshToken;
use crate::session_repository::{NewSession, Rotated, SessionRepository};
use crate::token_request::{Grant, RevokeRequest, TokenRequest};
use crate::token_signer::TokenPair;
use crate::unusable_hash_log::UnusableHashLog;
use crate::user::User;
use crate::user_repository::{Login, UserRepository};

/// What the token service asks of the database: the statements of contract
/// §7 (`Database`, the repositories over the pool; a fake in the tests).
pub trait Store: Send + Sync {
    /// L: reserve one attempt for the username, and read the user.
    fn reserve_login(&self, username: &str) -> impl Future<Output = Result<Login, ApiError>> + Send;
    /// G: give the username's attempt back (a shed grant).
    fn give_back(&self, username: &str) -> impl Future<Output = Result<(), ApiError>> + Send;
    /// S: the session and its first token, if the stored hash is still the verified one.
    fn start_session(&self, session: &NewSession<'_>) -> impl Future<Output = Result<bool, ApiError>> + Send;
    /// R: rotate.
    fn rotate(
        &self,
        presented: &[u8; 32],
        client_id: Option<&str>,
        next: &[u8; 32],
    ) -> impl Future<Output = Result<Option<Rotated>, ApiError>> + Send;
    /// U: revoke the family of a used token; the sessions revoked.
    fn revoke_reused(&self, presented: &[u8; 32]) -> impl Future<Output = Result<u64, ApiError>> + Send;
    /// V: revoke the family of any token.
    fn revoke(&self, presented: &[u8; 32]) -> impl Future<Output = Result<(), ApiError>> + Send;
}

/// The repositories over the pool.
pub struct Database {
    pub users: UserRepository,
    pub sessions: SessionRepository,
}

impl Store for Database {
    async fn reserve_login(&self, username: &str) -> Result<Login, ApiError> {
        self.users.reserve_login(username).await
    }

    async fn give_back(&self, username: &str) -> Result<(), ApiError> {
        self.users.give_back(username).await
    }

    async fn start_session(&self, session: &NewSession<'_>) -> Result<bool, ApiError> {
        self.sessions.start(session).await
    }

    async fn rotate(
        &self,
        presented: &[u8; 32],
        client_id: Option<&str>,
        next: &[u8; 32],
    ) -> Result<Option<Rotated>, ApiError> {
        self.sessions.rotate(presented, client_id, next).await
    }

    async fn revoke_reused(&self, presented: &[u8; 32]) -> Result<u64, ApiError> {
        self.sessions.revoke_reused(presented).await
    }

    async fn revoke(&self, presented: &[u8; 32]) -> Result<(), ApiError> {
        self.sessions.revoke(presented).await
    }
}

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

pub struct TokenService<S = Database> {
    store: S,
    passwords: PasswordVerifier,
    /// The per-address limit (in memory, this instance only).
    pub addresses: AddressLimiter,
    keys: Arc<KeyRing>,
    /// The access token's `client_id` and the ID token's `aud` when the request names none.
    default_client_id: Arc<str>,
    unusable_hashes: UnusableHashLog,
    signing_duration: SigningDuration,
    rejections: Rejections,
}

impl<S: Store> TokenService<S> {
    pub fn new(
        store: S,
        passwords: PasswordVerifier,
        addresses: AddressLimiter,
        keys: Arc<KeyRing>,
        default_client_id: &str,
        signing_duration: SigningDuration,
        rejections: Rejections,
    ) -> Self {
        TokenService {
            store,
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

    /// Step 1 of the password grant: one attempt of the client's address
    /// reserved before anything else, kept when the grant fails
    /// (`invalid_grant`) or is shed, given back otherwise.
    async fn password_grant(
        &self,
        username: String,
        password: String,
        client_id: Option<String>,
        address: Option<IpAddr>,
    ) -> Result<IssuedTokens, ApiError> {
        let reservation = match address.map(|address| self.addresses.reserve(address, Instant::now())) {
            None => Reservation::NONE,
            Some(Ok(reservation)) => reservation,
            Some(Err(retry_after)) => {
                self.rejections.address_locked();
                return Err(ApiError::TooManyFailures { lock: Lock::Address, retry_after });
            }
        };
        let result = self.check_password(&username, password, client_id).await;
        if !matches!(result, Err(ApiError::InvalidGrant | ApiError::Overloaded)) {
            self.addresses.release(reservation);
        }
        result
    }

    /// Steps 2-4: the username's attempt reserved with the user read (L), the
    /// check (an unknown user, an unusable hash and a legacy mismatch pay a
    /// decoy argon2id run, so all wrong logins cost one), then the session
    /// (S). Unknown user, wrong password, unusable stored hash and a hash
    /// changed since the check all fail alike (`InvalidGrant`).
    async fn check_password(
        &self,
        username: &str,
        password: String,
        client_id: Option<String>,
    ) -> Result<IssuedTokens, ApiError> {
        let mut user = match self.store.reserve_login(username).await? {
            Login::Locked { retry_after } => {
                self.rejections.username_locked();
                return Err(ApiError::TooManyFailures { lock: Lock::Username, retry_after });
            }
            Login::Unknown => {
                self.shed(self.passwords.verify_unknown_user(password).await, username).await?;
                return Err(ApiError::InvalidGrant);
            }
            Login::User(user) => user,
        };
        let verified = std::mem::take(&mut user.password_hash);
        match self.shed(self.passwords.verify(password, verified.clone()).await, username).await? {
            Verification::Match => {}
            Verification::Mismatch => return Err(ApiError::InvalidGrant),
            Verification::Unusable(reason) => {
                self.unusable_hashes.report(user.id, reason);
                return Err(ApiError::InvalidGrant);
            }
        }

        let client_id = match client_id {
            Some(client_id) => Arc::from(client_id),
            None => Arc::clone(&self.default_client_id),
        };
        let family = Uuid::new_v4();
        let refresh_token = new_refresh_token()?;
        let session = NewSession {
            username,
            token_hash: refresh_token.hash(),
            family,
            user: user.id,
            client_id: &client_id,
            verified: &verified,
        };
        if !self.store.start_session(&session).await? {
            // The stored hash changed since the check (a reset or a disable).
            return Err(ApiError::InvalidGrant);
        }
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
        let Some(rotated) = self.store.rotate(&presented, client_id.as_deref(), &next.hash()).await? else {
            // Unknown, expired, revoked, another client's, its user's hash
            // changed — or used before: then its family ends, for the thief
            // and the user alike.
            if self.store.revoke_reused(&presented).await? > 0 {
                self.rejections.refresh_reuse();
            }
            return Err(ApiError::InvalidRefreshToken);
        };
        let mut user = rotated.user;
        if unusable_reason(&std::mem::take(&mut user.password_hash)).is_some() {
            // Not reached while disabling changes the hash (R returns no row
            // then); kept as a guard: the presented token is used now, so this
            // revokes the family.
            self.store.revoke_reused(&presented).await?;
            return Err(ApiError::InvalidRefreshToken);
        }
        let pair = self.sign(user, Arc::from(rotated.client_id), rotated.family).await?;
        Ok(IssuedTokens { pair, refresh_token: next })
    }

    /// `POST /revoke`: the family of a well-formed token; any other value is
    /// not asked of the database. The answer is the same either way.
    pub async fn revoke(&self, request: RevokeRequest) -> Result<(), ApiError> {
        match RefreshToken::parse(&request.token) {
            Some(token) => self.store.revoke(&token.hash()).await,
            None => Ok(()),
        }
    }

    /// A check shed by the MAX_PASSWORD_CHECKS limit (503 `overload`) is
    /// counted as a rejection and gives the username's attempt back
    /// (statement G; if that fails too, the 503 stands). The address's
    /// attempt stays: an address that keeps sending logins this instance
    /// cannot afford to check is locked as a guesser's is.
    async fn shed<T>(&self, result: Result<T, ApiError>, username: &str) -> Result<T, ApiError> {
        if matches!(result, Err(ApiError::Overloaded)) {
            self.rejections.overload();
            let _ = self.store.give_back(username).await;
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
    use std::sync::Mutex;
    use std::time::Duration;

    use super::*;
    use crate::key_set::KeySet;
    use crate::metrics::Metrics;
    use crate::test_support::ISSUER;
    use crate::test_vectors::dev_key_pem;
    use crate::token_signer::TokenSigner;

    /// An argon2id hash of "other-params" (cheap parameters).
    const ARGON2ID: &str =
        "$argon2id$v=19$m=8192,t=1,p=2$wewKX1x3DjMtbzJIm1KiAw$Wzz246VuwyT7Q3BxZXS/++K1hI9zDy+fJ+7R1CKe3MU";
    /// A legacy HMAC hash of "TopSecret0!".
    const LEGACY: &str = "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE=";

    /// What statement L answers in a test.
    #[derive(Clone)]
    enum Found {
        Down,
        Locked(u64),
        Unknown,
        User(&'static str),
    }

    /// A store that answers as told and writes down the statements asked, in order.
    struct FakeStore {
        found: Found,
        /// What statement S answers: the hash is still the verified one.
        hash_unchanged: bool,
        calls: Mutex<Vec<String>>,
    }

    impl FakeStore {
        fn call(&self, what: String) {
            self.calls.lock().expect("calls").push(what);
        }
    }

    impl Store for FakeStore {
        async fn reserve_login(&self, username: &str) -> Result<Login, ApiError> {
            self.call(format!("L {username}"));
            match self.found {
                Found::Down => Err(ApiError::DatabaseUnavailable),
                Found::Locked(retry_after) => Ok(Login::Locked { retry_after }),
                Found::Unknown => Ok(Login::Unknown),
                Found::User(hash) => Ok(Login::User(User {
                    id: Uuid::nil(),
                    username: "john".into(),
                    name: "John".into(),
                    email: username.into(),
                    password_hash: hash.into(),
                })),
            }
        }

        async fn give_back(&self, username: &str) -> Result<(), ApiError> {
            self.call(format!("G {username}"));
            Err(ApiError::DatabaseUnavailable) // ignored by the grant
        }

        async fn start_session(&self, session: &NewSession<'_>) -> Result<bool, ApiError> {
            self.call(format!("S {} {} {}", session.username, session.client_id, session.verified));
            Ok(self.hash_unchanged)
        }

        async fn rotate(&self, _: &[u8; 32], _: Option<&str>, _: &[u8; 32]) -> Result<Option<Rotated>, ApiError> {
            self.call("R".into());
            Ok(None)
        }

        async fn revoke_reused(&self, _: &[u8; 32]) -> Result<u64, ApiError> {
            self.call("U".into());
            Ok(1)
        }

        async fn revoke(&self, _: &[u8; 32]) -> Result<(), ApiError> {
            self.call("V".into());
            Ok(())
        }
    }

    struct Fixture {
        tokens: TokenService<FakeStore>,
        metrics: Metrics,
    }

    /// A service over `found`, with `max_checks` permits and an address limit of 2.
    fn fixture(found: Found, hash_unchanged: bool, max_checks: usize) -> Fixture {
        let metrics = Metrics::new().expect("metrics");
        let signer =
            TokenSigner::from_pem(&dev_key_pem("rsa-2048"), ISSUER.into(), "channel-api".into(), 600).expect("key");
        let store = FakeStore { found, hash_unchanged, calls: Mutex::new(Vec::new()) };
        let tokens = TokenService::new(
            store,
            PasswordVerifier::new(1, max_checks, metrics.password_checks()),
            AddressLimiter::new(2, Duration::from_secs(60)),
            Arc::new(KeyRing::new(KeySet::new(signer, &[], ISSUER))),
            "public",
            metrics.signing_duration(),
            metrics.rejections(),
        );
        Fixture { tokens, metrics }
    }

    const ADDRESS: &str = "192.0.2.9";

    impl Fixture {
        async fn login(&self, password: &str) -> Result<IssuedTokens, ApiError> {
            let grant = Grant::Password { username: "John@Example.com".into(), password: password.into() };
            let request = TokenRequest { grant, client_id: Some("web".into()) };
            self.tokens.issue(request, Some(ADDRESS.parse().expect("ip"))).await
        }

        fn calls(&self) -> Vec<String> {
            std::mem::take(&mut *self.tokens.store.calls.lock().expect("calls"))
        }

        /// Attempts the address has left in its window (its limit is 2).
        fn address_attempts_left(&self) -> usize {
            let now = Instant::now();
            let address = ADDRESS.parse().expect("ip");
            let taken: Vec<_> = (0..3).map_while(|_| self.tokens.addresses.reserve(address, now).ok()).collect();
            let left = taken.len();
            taken.into_iter().for_each(|r| self.tokens.addresses.release(r));
            left
        }

        fn metric_lines(&self, prefix: &str) -> Vec<String> {
            let pool = deadpool_postgres::Status { max_size: 1, size: 0, available: 0, waiting: 0 };
            let text = String::from_utf8(self.metrics.render(pool)).expect("utf-8");
            text.lines().filter(|l| l.starts_with(prefix) && !l.ends_with(" 0")).map(str::to_owned).collect()
        }
    }

    fn is_invalid_grant<T>(result: &Result<T, ApiError>) -> bool {
        matches!(result, Err(ApiError::InvalidGrant))
    }

    #[tokio::test]
    async fn a_locked_address_is_refused_before_the_database() {
        let f = fixture(Found::Unknown, true, 4);
        for _ in 0..2 {
            assert!(is_invalid_grant(&f.login("wrong").await));
        }
        assert_eq!(f.calls(), ["L John@Example.com", "L John@Example.com"]);
        let locked = f.login("wrong").await;
        assert!(matches!(locked, Err(ApiError::TooManyFailures { lock: Lock::Address, .. })), "{locked:?}");
        assert!(f.calls().is_empty(), "nothing asked of the database");
    }

    #[tokio::test]
    async fn a_database_error_or_a_locked_username_gives_the_address_attempt_back_without_a_check() {
        for (found, expected) in [(Found::Down, 503), (Found::Locked(42), 429)] {
            let f = fixture(found, true, 4);
            for _ in 0..3 {
                let result = f.login("TopSecret0!").await;
                assert_eq!(result.as_ref().map_err(ApiError::status).err(), Some(expected));
            }
            assert_eq!(f.calls().len(), 3, "each asked the database: the address never locked");
            assert_eq!(f.address_attempts_left(), 2);
            assert!(f.metric_lines("simpleauth_password_checks_total").is_empty(), "no hash computed");
        }
        let f = fixture(Found::Locked(42), true, 4);
        let Err(ApiError::TooManyFailures { lock: Lock::Username, retry_after: 42 }) = f.login("x").await else {
            panic!("not the username's 429")
        };
    }

    #[tokio::test]
    async fn every_wrong_login_keeps_both_reservations_and_costs_one_argon2id_run() {
        for (found, password, metric) in [
            (Found::User(ARGON2ID), "wrong", r#"{result="mismatch",scheme="argon2id"} 1"#),
            (Found::User(LEGACY), "wrong", r#"{result="mismatch",scheme="hmac-sha256"} 1"#),
            (Found::User("!disabled"), "TopSecret0!", r#"{result="unusable",scheme="unknown"} 1"#),
            (Found::Unknown, "TopSecret0!", r#"{result="mismatch",scheme="dummy"} 1"#),
        ] {
            let f = fixture(found, true, 4);
            assert!(is_invalid_grant(&f.login(password).await), "{metric}");
            assert_eq!(f.calls(), ["L John@Example.com"], "{metric}: no G, no S");
            assert_eq!(f.address_attempts_left(), 1, "{metric}: the address's attempt stays");
            assert_eq!(
                f.metric_lines("simpleauth_password_checks_total"),
                [format!("simpleauth_password_checks_total{metric}")]
            );
        }
    }

    #[tokio::test]
    async fn every_argon2id_run_needs_a_permit_and_a_shed_grant_gives_the_username_attempt_back() {
        for found in [Found::User(ARGON2ID), Found::User(LEGACY), Found::User("!disabled"), Found::Unknown] {
            let f = fixture(found, true, 1);
            let held = f.tokens.passwords.admission().try_admit().expect("the one permit");
            let shed = f.login("wrong").await;
            assert!(matches!(shed, Err(ApiError::Overloaded)), "{shed:?}");
            // G's own failure is ignored: the answer is the 503 overload.
            assert_eq!(f.calls(), ["L John@Example.com", "G John@Example.com"]);
            assert_eq!(f.address_attempts_left(), 1, "a shed grant counts for its address");
            assert_eq!(f.metric_lines(r#"simpleauth_rejections_total{reason="overload"}"#).len(), 1);
            assert!(f.metric_lines("simpleauth_password_checks_total").is_empty(), "a shed check is not counted");
            drop(held);
        }
        // A legacy match needs no permit.
        let f = fixture(Found::User(LEGACY), true, 1);
        let _held = f.tokens.passwords.admission().try_admit().expect("the one permit");
        assert!(f.login("TopSecret0!").await.is_ok());
    }

    #[tokio::test]
    async fn a_match_starts_the_session_with_the_verified_hash_and_gives_the_address_attempt_back() {
        for found in [Found::User(ARGON2ID), Found::User(LEGACY)] {
            let password = if matches!(found, Found::User(ARGON2ID)) { "other-params" } else { "TopSecret0!" };
            let hash = match found {
                Found::User(hash) => hash,
                _ => unreachable!(),
            };
            let f = fixture(found.clone(), true, 4);
            let issued = f.login(password).await.expect("200");
            assert_eq!(f.calls(), ["L John@Example.com".to_owned(), format!("S John@Example.com web {hash}")]);
            assert_eq!(f.address_attempts_left(), 2, "a success is not a failure");
            assert!(!issued.pair.id_token.is_empty());

            // 0 rows from S: the hash changed since the check — exactly a wrong password.
            let f = fixture(found, false, 4);
            assert!(is_invalid_grant(&f.login(password).await));
            assert_eq!(f.calls().len(), 2);
            assert_eq!(f.address_attempts_left(), 1, "both reservations stay");
        }
    }

    #[tokio::test]
    async fn a_refresh_that_does_not_rotate_revokes_a_reused_family() {
        let f = fixture(Found::Unknown, true, 4);
        let grant = Grant::RefreshToken { refresh_token: crate::test_support::REFRESH_TOKEN.into() };
        let refused = f.tokens.issue(TokenRequest { grant, client_id: None }, None).await;
        assert!(matches!(refused, Err(ApiError::InvalidRefreshToken)), "{refused:?}");
        assert_eq!(f.calls(), ["R", "U"]);
        assert_eq!(f.metric_lines(r#"simpleauth_rejections_total{reason="refresh_reuse"}"#).len(), 1);
        let revoke = RevokeRequest { token: crate::test_support::REFRESH_TOKEN.into() };
        f.tokens.revoke(revoke).await.expect("revoked");
        assert_eq!(f.calls(), ["V"]);
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
