//! `PasswordCheckLimit`: at most `MAX_PASSWORD_CHECKS` argon2id checks
//! admitted at once (running or waiting for a core); one more is refused at
//! once (contract §8, 503).

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// MAX_PASSWORD_CHECKS permits, taken without waiting.
#[derive(Clone)]
pub struct PasswordCheckLimit {
    permits: Arc<Semaphore>,
}

/// One admitted check; the permit goes back when this is dropped (the check
/// finished, failed, panicked, or its request went away while it waited).
#[derive(Debug)]
pub struct Admitted(#[allow(dead_code)] OwnedSemaphorePermit);

impl PasswordCheckLimit {
    pub fn new(max_checks: usize) -> Self {
        PasswordCheckLimit { permits: Arc::new(Semaphore::new(max_checks.clamp(1, Semaphore::MAX_PERMITS))) }
    }

    /// A permit if one is free now; `None` means shed the request (503).
    pub fn try_admit(&self) -> Option<Admitted> {
        Arc::clone(&self.permits).try_acquire_owned().ok().map(Admitted)
    }

    /// Permits free now.
    pub fn available(&self) -> usize {
        self.permits.available_permits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admission_takes_and_gives_back_permits() {
        let admission = PasswordCheckLimit::new(2);
        let a = admission.try_admit().expect("first");
        let b = admission.clone().try_admit().expect("second, clones share the permits");
        assert_eq!(admission.available(), 0);
        assert!(admission.try_admit().is_none(), "a third is shed");
        drop(a);
        assert_eq!(admission.available(), 1);
        let c = admission.try_admit().expect("freed");
        drop((b, c));
        assert_eq!(admission.available(), 2);
    }
}
