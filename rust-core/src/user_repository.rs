//! `UserRepository`: what a password grant asks of the database — the user
//! and the username's lock in one round trip, and the count of a failed
//! login (the per-username limit of contract §8 lives in PostgreSQL, so every
//! instance sees one count).

use deadpool_postgres::Pool;

use crate::api_error::ApiError;
use crate::outage_log::OutageLog;
use crate::user::User;

/// The password grant: the user and the username's lock in one round trip
/// (always one row; id is NULL for an unknown user, locked_for NULL unless
/// the username is locked). $1 username, $2 LOGIN_MAX_FAILURES,
/// $3 LOGIN_FAILURE_WINDOW_SECONDS. The same text in every stack (spec §7).
pub const FIND_LOGIN: &str = "\
SELECT u.id, u.username, u.name, u.email, u.password_hash,
       CASE WHEN f.failures >= $2::integer
            THEN ceil(extract(epoch FROM f.window_start + $3::integer * interval '1 second' - now()))::integer
       END AS locked_for
FROM (SELECT lower($1) AS login) AS l
LEFT JOIN users u ON u.email = l.login
LEFT JOIN login_failures f ON f.username = l.login AND f.window_start > now() - $3::integer * interval '1 second'";

/// The password grant, failure (invalid_grant): count it.
/// $1 username, $2 LOGIN_FAILURE_WINDOW_SECONDS.
pub const COUNT_FAILURE: &str = "\
INSERT INTO login_failures AS f (username, failures, window_start) VALUES (lower($1), 1, now())
ON CONFLICT (username) DO UPDATE SET
    failures     = CASE WHEN f.window_start > now() - $2::integer * interval '1 second' THEN f.failures + 1 ELSE 1 END,
    window_start = CASE WHEN f.window_start > now() - $2::integer * interval '1 second' THEN f.window_start ELSE now() END";

/// What `FIND_LOGIN` found for a username.
#[derive(Debug)]
pub enum Login {
    /// Too many failures in the window: 429 for this many more seconds (at least 1).
    Locked {
        retry_after: u64,
    },
    /// No such user (and not locked).
    Unknown,
    User(User),
}

/// The users a login reads and the failures it counts; a database that is
/// down is `ApiError::DatabaseUnavailable`.
#[derive(Clone)]
pub struct UserRepository {
    pool: Pool,
    outage: OutageLog,
    max_failures: i32,
    window_seconds: i32,
}

impl UserRepository {
    /// `max_failures` and `window_seconds`: LOGIN_MAX_FAILURES and LOGIN_FAILURE_WINDOW_SECONDS.
    pub fn new(pool: Pool, outage: OutageLog, max_failures: i32, window_seconds: i32) -> Self {
        UserRepository { pool, outage, max_failures, window_seconds }
    }

    /// The user whose e-mail is `username` (the database lowercases it), or
    /// the username's lock.
    pub async fn find_by_email(&self, username: &str) -> Result<Login, ApiError> {
        let failed = |e| self.outage.query_failed(e);
        let client = self.pool.get().await.map_err(|e| self.outage.pool_failed(e))?;
        let statement = client.prepare_cached(FIND_LOGIN).await.map_err(failed)?;
        let row = client.query_one(&statement, &[&username, &self.max_failures, &self.window_seconds]).await;
        let row = row.map_err(failed)?;
        self.outage.reachable();
        if let Some(seconds) = row.try_get::<_, Option<i32>>(5).map_err(failed)? {
            return Ok(Login::Locked { retry_after: u64::try_from(seconds).unwrap_or(0).max(1) });
        }
        let Some(id) = row.try_get(0).map_err(failed)? else { return Ok(Login::Unknown) };
        Ok(Login::User(User {
            id,
            username: row.try_get(1).map_err(failed)?,
            name: row.try_get(2).map_err(failed)?,
            email: row.try_get(3).map_err(failed)?,
            password_hash: row.try_get(4).map_err(failed)?,
        }))
    }

    /// One failed login for `username` (known or not), in its window.
    pub async fn count_failure(&self, username: &str) -> Result<(), ApiError> {
        let failed = |e| self.outage.query_failed(e);
        let client = self.pool.get().await.map_err(|e| self.outage.pool_failed(e))?;
        let statement = client.prepare_cached(COUNT_FAILURE).await.map_err(failed)?;
        client.execute(&statement, &[&username, &self.window_seconds]).await.map_err(failed)?;
        self.outage.reachable();
        Ok(())
    }
}
