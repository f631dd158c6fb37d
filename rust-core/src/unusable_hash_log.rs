//! `UnusableHashLog`: an unusable stored hash (a disabled user, an unknown
//! scheme) is logged at warn once per user, without the hash; later logins of
//! that user at debug, so a client retrying such an account cannot flood the
//! log.

use std::collections::HashSet;
use std::sync::Mutex;

use uuid::Uuid;

#[derive(Default)]
pub struct UnusableHashLog {
    seen: Mutex<HashSet<Uuid>>,
}

impl UnusableHashLog {
    /// Users remembered at most; beyond them, reports go to debug only.
    pub const MAX_REMEMBERED: usize = 10_000;

    /// Returns whether this report was logged at warn.
    pub fn report(&self, user_id: Uuid, reason: &str) -> bool {
        let first = match self.seen.lock() {
            Ok(mut seen) => seen.len() < Self::MAX_REMEMBERED && seen.insert(user_id),
            Err(_) => true,
        };
        if first {
            tracing::warn!(user_id = %user_id, "data error: unusable password hash ({reason}); logins for this user are refused");
        } else {
            tracing::debug!(user_id = %user_id, "data error: unusable password hash ({reason})");
        }
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unusable_hash_is_logged_once_per_user() {
        let log = UnusableHashLog::default();
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        assert!(log.report(a, "x"));
        assert!(!log.report(a, "x"));
        assert!(log.report(b, "x"));
    }

    #[test]
    fn at_most_max_remembered_users_are_remembered() {
        let log = UnusableHashLog::default();
        for _ in 0..UnusableHashLog::MAX_REMEMBERED {
            assert!(log.report(Uuid::new_v4(), "x"));
        }
        assert!(!log.report(Uuid::new_v4(), "x"), "a user beyond the limit is logged at debug");
        assert_eq!(log.seen.lock().expect("lock").len(), UnusableHashLog::MAX_REMEMBERED);
    }
}
