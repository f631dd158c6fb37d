//! `UserRepository`: what a password grant asks of the database — one
//! attempt reserved for the username and the user read, in one round trip
//! (statement L of contract §7), and the reservation given back when the
//! grant is shed (statement G). The per-username limit of contract §8 lives
//! in PostgreSQL, so every instance sees one count.

use deadpool_postgres::Pool;

use crate::api_error::ApiError;
use crate::outage_log::OutageLog;
use crate::user::User;

/// L. The password grant: reserve one attempt for the username, and read the
/// user, in one round trip (always one row; id is NULL for an unknown user;
/// locked_for is NULL unless this attempt is beyond the limit).
/// $1 username, $2 LOGIN_MAX_FAILURES, $3 LOGIN_FAILURE_WINDOW_SECONDS.
/// The same text in every stack (spec §7).
pub const RESERVE_LOGIN: &str = "\
WITH attempt AS (
    INSERT INTO login_failures AS f (username, failures, window_start) VALUES (lower($1), 1, now())
    ON CONFLICT (username) DO UPDATE SET
        failures     = CASE WHEN f.window_start > now() - $3::integer * interval '1 second'
                            THEN least(f.failures + 1, $2::integer + 1) ELSE 1 END,
        window_start = CASE WHEN f.window_start > now() - $3::integer * interval '1 second'
                            THEN f.window_start ELSE now() END
    RETURNING failures, window_start
)
SELECT u.id, u.username, u.name, u.email, u.password_hash,
       CASE WHEN a.failures > $2::integer
            THEN greatest(1, ceil(extract(epoch FROM a.window_start + $3::integer * interval '1 second' - now())))::integer
       END AS locked_for
FROM attempt a LEFT JOIN users u ON u.email = lower($1)";

/// G. A password grant shed by the overload limit (503) gives its
/// reservation back. $1 username.
pub const GIVE_BACK: &str = "\
UPDATE login_failures SET failures = failures - 1 WHERE username = lower($1) AND failures > 0";

/// What `RESERVE_LOGIN` found for a username.
#[derive(Debug)]
pub enum Login {
    /// This attempt is beyond the limit: 429 for this many more seconds (at least 1).
    Locked {
        retry_after: u64,
    },
    /// No such user (and not locked).
    Unknown,
    User(User),
}

/// The users a login reads and the attempts it reserves; a database that is
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

    /// Reserves one attempt for `username` (known or not) and reads the user
    /// whose e-mail it is (the database lowercases it), or the username's lock.
    pub async fn reserve_login(&self, username: &str) -> Result<Login, ApiError> {
        let failed = |e| self.outage.query_failed(e);
        let client = self.pool.get().await.map_err(|e| self.outage.pool_failed(e))?;
        let statement = client.prepare_cached(RESERVE_LOGIN).await.map_err(failed)?;
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

    /// Gives back the attempt `reserve_login` reserved for `username`.
    pub async fn give_back(&self, username: &str) -> Result<(), ApiError> {
        let failed = |e| self.outage.query_failed(e);
        let client = self.pool.get().await.map_err(|e| self.outage.pool_failed(e))?;
        let statement = client.prepare_cached(GIVE_BACK).await.map_err(failed)?;
        client.execute(&statement, &[&username]).await.map_err(failed)?;
        self.outage.reachable();
        Ok(())
    }
}
