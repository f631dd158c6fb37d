//! `SessionRepository`: the `refresh_tokens` table (contract §7) — a session
//! started by a login, rotated by a refresh, revoked on reuse or by
//! `POST /revoke`. Only SHA-256 hashes of the tokens are sent.

use deadpool_postgres::Pool;
use uuid::Uuid;

use crate::api_error::ApiError;
use crate::outage_log::OutageLog;
use crate::user::User;

/// The password grant, success: the session's first refresh token, the
/// failure count cleared. $1 username, $2 SHA-256 of the refresh token,
/// $3 the sid, $4 the user's id, $5 client_id, $6 REFRESH_TTL_SECONDS.
pub const START_SESSION: &str = "\
WITH cleared AS (DELETE FROM login_failures WHERE username = lower($1))
INSERT INTO refresh_tokens (token_hash, family_id, user_id, client_id, expires_at)
VALUES ($2, $3, $4, $5, now() + $6::integer * interval '1 second')";

/// The refresh grant: rotate. $1 SHA-256 of the presented token, $2 the
/// request's client_id or NULL, $3 SHA-256 of the new token, $4 REFRESH_TTL_SECONDS.
pub const ROTATE: &str = "\
WITH used AS (
    UPDATE refresh_tokens SET used_at = now()
    WHERE token_hash = $1 AND used_at IS NULL AND revoked_at IS NULL AND expires_at > now()
      AND ($2::text IS NULL OR client_id = $2::text)
    RETURNING family_id, user_id, client_id
), issued AS (
    INSERT INTO refresh_tokens (token_hash, family_id, user_id, client_id, expires_at)
    SELECT $3, family_id, user_id, client_id, now() + $4::integer * interval '1 second' FROM used
)
SELECT u.id, u.username, u.name, u.email, u.password_hash, used.family_id, used.client_id
FROM used JOIN users u ON u.id = used.user_id";

/// The refresh grant when rotate returned no row (reuse), and a disabled
/// user's family: revoke the family of a used token. $1 SHA-256 of the presented token.
pub const REVOKE_REUSED: &str = "\
UPDATE refresh_tokens SET revoked_at = now()
WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1 AND used_at IS NOT NULL)
  AND revoked_at IS NULL";

/// POST /revoke: revoke the family of any token. $1 SHA-256 of the presented token.
pub const REVOKE: &str = "\
UPDATE refresh_tokens SET revoked_at = now()
WHERE family_id = (SELECT family_id FROM refresh_tokens WHERE token_hash = $1)
  AND revoked_at IS NULL";

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
}

impl SessionRepository {
    /// `refresh_ttl_seconds`: REFRESH_TTL_SECONDS, each token's lifetime from its issue.
    pub fn new(pool: Pool, outage: OutageLog, refresh_ttl_seconds: i32) -> Self {
        SessionRepository { pool, outage, refresh_ttl_seconds }
    }

    /// A new family `family` for `user` with its first token, `username`'s failures cleared.
    pub async fn start(
        &self,
        username: &str,
        token_hash: &[u8; 32],
        family: Uuid,
        user: Uuid,
        client_id: &str,
    ) -> Result<(), ApiError> {
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 6] =
            [&username, &token_hash.as_slice(), &family, &user, &client_id, &self.refresh_ttl_seconds];
        self.execute(START_SESSION, &params).await.map(drop)
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
    /// of tokens revoked (0: not a used token, or its family already revoked).
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
