//! `User`: the row of the channel API's `users` table that a login reads.

use uuid::Uuid;

#[derive(Debug, Clone)]
pub struct User {
    pub id: Uuid,
    pub username: String,
    pub name: String,
    pub email: String,
    pub password_hash: String,
}
