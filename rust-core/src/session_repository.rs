//! `SessionRepository`: the `sessions` and `refresh_tokens` tables (contract
//! §6, §7) — a session (refresh-token family) started by a password grant,
//! rotated by a refresh, revoked on reuse or by `POST /revoke`. Only SHA-256
//! hashes of the tokens are sent. Rotation locks the session row FOR SHARE
//! and revocation updates it, so the two serialise; a session lives only
//! while its user's stored hash is the one its login verified.

use deadpool_postgres::Pool;
use uuid::Uuid;

use crate::api_error::ApiError;
use crate::outage_log::OutageLog;
use crate::user::User;

/// S. The password grant, success: the session and its first refresh token,
/// only if the user's hash is still the one verified; the username's count
/// cleared. 0 rows inserted = the credentials changed meanwhile.
/// $1 username, $2 SHA-256 of the refresh token, $3 the sid, $4 the user's id,
/// $5 client_id, $6 REFRESH_TTL_SECONDS, $7 REFRESH_MAX_LIFETIME_SECONDS,
/// $8 the password_hash the check verified.
pub const START_SESSION: &str = "\
WITH session AS (
    INSERT INTO sessions (family_id, user_id, client_id, credential, expires_at)
    SELECT $3, u.id, $5, sha256(convert_to(u.password_hash, 'UTF8')), now() + $7::integer * interval '1 second'
    FROM users u WHERE u.id = $4 AND u.password_hash = $8
    RETURNING family_id, expires_at
), cleared AS (
    DELETE FROM login_failures WHERE username = lower($1) AND EXISTS (SELECT 1 FROM session)
)
INSERT INTO refresh_tokens (token_hash, family_id, expires_at)
SELECT $2, family_id, least(now() + $6::integer * interval '1 second', expires_at) FROM session";

/// R. The refresh grant: rotate (the family row locked FOR SHARE; revoked,
/// expired, another client's or a changed credential = no row).
/// $1 SHA-256 of the presented token, $2 the request's client_id or NULL,
/// $3 SHA-256 of the new token, $4 REFRESH_TTL_SECONDS.
pub const ROTATE: &str = "\
WITH session AS (
    SELECT s.family_id, s.user_id, s.client_id
    FROM refresh_tokens t
    JOIN sessions s ON s.family_id = t.family_id
    JOIN users u ON u.id = s.user_id
    WHERE t.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
      AND ($2::text IS NULL OR s.client_id = $2::text)
      AND sha256(convert_to(u.password_hash, 'UTF8')) = s.credential
    FOR SHARE OF s
), used AS (
    UPDATE refresh_tokens t SET used_at = now()
    FROM session
    WHERE t.token_hash = $1 AND t.family_id = session.family_id AND t.used_at IS NULL AND t.expires_at > now()
    RETURNING t.family_id
), issued AS (
    INSERT INTO refresh_tokens (token_hash, family_id, expires_at)
    SELECT $3, s.family_id, least(now() + $4::integer * interval '1 second', s.expires_at)
    FROM used JOIN sessions s ON s.family_id = used.family_id
)
SELECT u.id, u.username, u.name, u.email, u.password_hash, session.family_id, session.client_id
FROM used JOIN session ON session.family_id = used.family_id JOIN users u ON u.id = session.user_id";

/// U. The refresh grant when R returned no row: reuse — revoke the family of
/// a used token. $1 SHA-256 of the presented token.
pub const REVOKE_REUSED: &str = "\
UPDATE sessions SET revoked_at = now()
WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1 AND used_at IS NOT NULL)
  AND revoked_at IS NULL";

/// V. POST /revoke: revoke the family of any token. $1 SHA-256 of the presented token.
pub const REVOKE: &str = "\
UPDATE sessions SET revoked_at = now()
WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1)
  AND revoked_at IS NULL";

/// What statement S needs to start a session.
#[derive(Debug)]
pub struct NewSession<'a> {
    pub username: &'a str,
    pub token_hash: [u8; 32],
    pub family: Uuid,
    pub user: Uuid,
    pub client_id: &'a str,
    /// The stored hash the password check verified.
    pub verified: &'a str,
}

/// What a rotation returns: the user as the database has it now, the family
/// (the tokens' `sid`) and the family's `client_id`.
#[derive(Debug)]
pub struct Rotated {
    pub user: User,
    pub family: Uuid,
    pub client_id: String,
}

#[derive(Clone)]
pub struct SessionRepository {
    pool: Pool,
    outage: OutageLog,
    refresh_ttl_seconds: i32,
    max_lifetime_seconds: i32,
}

impl SessionRepository {
    /// `refresh_ttl_seconds`: REFRESH_TTL_SECONDS, each token's lifetime from
    /// its issue; `max_lifetime_seconds`: REFRESH_MAX_LIFETIME_SECONDS, a
    /// session's from its password grant.
    pub fn new(pool: Pool, outage: OutageLog, refresh_ttl_seconds: i32, max_lifetime_seconds: i32) -> Self {
        SessionRepository { pool, outage, refresh_ttl_seconds, max_lifetime_seconds }
    }

    /// A new session `family` for `user` with its first token and
    /// `username`'s count cleared — if `verified` is still the user's stored
    /// hash. `false`: it is not (the credentials changed since the check).
    pub async fn start(&self, session: &NewSession<'_>) -> Result<bool, ApiError> {
        let NewSession { username, token_hash, family, user, client_id, verified } = session;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 8] = [
            username,
            &token_hash.as_slice(),
            family,
            user,
            client_id,
            &self.refresh_ttl_seconds,
            &self.max_lifetime_seconds,
            verified,
        ];
        Ok(self.execute(START_SESSION, &params).await? > 0)
    }

    /// Marks `presented` used and stores `next` in its family, if `presented`
    /// is live (and of `client_id`, when one is named); `None` otherwise.
    pub async fn rotate(
        &self,
        presented: &[u8; 32],
        client_id: Option<&str>,
        next: &[u8; 32],
    ) -> Result<Option<Rotated>, ApiError> {
        let failed = |e| self.outage.query_failed(e);
        let client = self.pool.get().await.map_err(|e| self.outage.pool_failed(e))?;
        let statement = client.prepare_cached(ROTATE).await.map_err(failed)?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
            [&presented.as_slice(), &client_id, &next.as_slice(), &self.refresh_ttl_seconds];
        let row = client.query_opt(&statement, &params).await.map_err(failed)?;
        self.outage.reachable();
        let Some(row) = row else { return Ok(None) };
        Ok(Some(Rotated {
            user: User {
                id: row.try_get(0).map_err(failed)?,
                username: row.try_get(1).map_err(failed)?,
                name: row.try_get(2).map_err(failed)?,
                email: row.try_get(3).map_err(failed)?,
                password_hash: row.try_get(4).map_err(failed)?,
            },
            family: row.try_get(5).map_err(failed)?,
            client_id: row.try_get(6).map_err(failed)?,
        }))
    }

    /// Revokes the family of `presented` if it was used before; the number
    /// of sessions revoked (0: not a used token, or its family already revoked).
    pub async fn revoke_reused(&self, presented: &[u8; 32]) -> Result<u64, ApiError> {
        self.execute(REVOKE_REUSED, &[&presented.as_slice()]).await
    }

    /// Revokes the family of `presented`, whatever its state.
    pub async fn revoke(&self, presented: &[u8; 32]) -> Result<(), ApiError> {
        self.execute(REVOKE, &[&presented.as_slice()]).await.map(drop)
    }

    async fn execute(&self, sql: &str, params: &[&(dyn tokio_postgres::types::ToSql + Sync)]) -> Result<u64, ApiError> {
        let failed = |e| self.outage.query_failed(e);
        let client = self.pool.get().await.map_err(|e| self.outage.pool_failed(e))?;
        let statement = client.prepare_cached(sql).await.map_err(failed)?;
        let rows = client.execute(&statement, params).await.map_err(failed)?;
        self.outage.reachable();
        Ok(rows)
    }
}
