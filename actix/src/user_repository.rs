//! `UserRepository`: the one query of the service, through the pool.

use deadpool_postgres::Pool;

use crate::database_outage::DatabaseOutage;
use crate::errors::ApiError;
use crate::user::User;

/// The same statement in every stack of the project.
pub const FIND_USER_BY_EMAIL: &str =
    "SELECT id, username, name, email, password_hash FROM users WHERE email = lower($1)";

/// Reads users; a database that is down is `ApiError::DatabaseUnavailable`.
#[derive(Clone)]
pub struct UserRepository {
    pool: Pool,
    outage: DatabaseOutage,
}

impl UserRepository {
    pub fn new(pool: Pool, outage: DatabaseOutage) -> Self {
        UserRepository { pool, outage }
    }

    /// Looks a user up by e-mail (the database lowercases the argument).
    pub async fn find_by_email(&self, email: &str) -> Result<Option<User>, ApiError> {
        let failed = |e| self.outage.query_failed(e);
        let client = self.pool.get().await.map_err(|e| self.outage.pool_failed(e))?;
        let statement = client.prepare_cached(FIND_USER_BY_EMAIL).await.map_err(failed)?;
        let row = client.query_opt(&statement, &[&email]).await.map_err(failed)?;
        self.outage.reachable();
        let Some(row) = row else { return Ok(None) };
        Ok(Some(User {
            id: row.try_get(0).map_err(failed)?,
            username: row.try_get(1).map_err(failed)?,
            name: row.try_get(2).map_err(failed)?,
            email: row.try_get(3).map_err(failed)?,
            password_hash: row.try_get(4).map_err(failed)?,
        }))
    }
}
