//! `PasswordVerifier`: runs the password checks of `password_hashes` off the
//! async executor, counts them, and pays the decoy argon2id run that keeps an
//! unknown user or an unusable stored hash from being told apart by timing.

use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::errors::ApiError;
use crate::metrics::PasswordChecks;
use crate::password_hashes::{DUMMY_ARGON2ID_HASH, Scheme, Verification, is_costly, verify};

/// At most `limit` argon2id runs at a time across all workers: each one holds
/// 19 MiB and a core for ~20-50 ms, so more at once only adds memory and
/// queueing, not throughput.
#[derive(Clone)]
pub struct PasswordVerifier {
    permits: Arc<Semaphore>,
    checks: PasswordChecks,
}

impl PasswordVerifier {
    pub fn new(limit: usize, checks: PasswordChecks) -> Self {
        PasswordVerifier { permits: Arc::new(Semaphore::new(limit.max(1))), checks }
    }

    /// Verifies a known user's password (cheap schemes inline). An unusable
    /// stored hash also pays the decoy run of `verify_unknown_user`, counted
    /// once, as `unusable`.
    pub async fn verify(&self, password: String, stored: String) -> Result<Verification, ApiError> {
        let scheme = Scheme::of(&stored);
        let verification = if is_costly(&stored) {
            self.blocking(move || verify(password.as_bytes(), &stored)).await?
        } else {
            verify(password.as_bytes(), &stored)
        };
        self.checks.record(scheme, verification);
        if matches!(verification, Verification::Unusable(_)) {
            self.decoy(String::new()).await?;
        }
        Ok(verification)
    }

    /// The decoy argon2id run for an unknown user: what a wrong password of an
    /// argon2id user costs (counted as the `dummy` scheme).
    pub async fn verify_unknown_user(&self, password: String) -> Result<(), ApiError> {
        let verification = self.decoy(password).await?;
        self.checks.record(Scheme::Dummy, verification);
        Ok(())
    }

    async fn decoy(&self, password: String) -> Result<Verification, ApiError> {
        self.blocking(move || verify(password.as_bytes(), DUMMY_ARGON2ID_HASH)).await
    }

    async fn blocking<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> Result<T, ApiError> {
        let _permit = self.permits.acquire().await.map_err(|_| ApiError::Internal)?;
        actix_web::web::block(work).await.map_err(|e| {
            tracing::error!("password verification task failed: {e}");
            ApiError::Internal
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    const OTHER_PARAMS: &str =
        "$argon2id$v=19$m=8192,t=1,p=2$wewKX1x3DjMtbzJIm1KiAw$Wzz246VuwyT7Q3BxZXS/++K1hI9zDy+fJ+7R1CKe3MU";

    fn text(metrics: &crate::metrics::Metrics) -> String {
        let pool = deadpool_postgres::Status { max_size: 1, size: 0, available: 0, waiting: 0 };
        String::from_utf8(metrics.render(pool)).expect("utf-8")
    }

    #[actix_rt::test]
    async fn verifier_runs_argon2id_off_the_executor() {
        let metrics = crate::metrics::Metrics::new().expect("metrics");
        let verifier = PasswordVerifier::new(2, metrics.password_checks());
        let ok = verifier.verify("other-params".into(), OTHER_PARAMS.into()).await.expect("ran");
        assert_eq!(ok, Verification::Match);
        verifier.verify_unknown_user("whatever".into()).await.expect("ran");
        let text = text(&metrics);
        for line in [
            r#"simpleauth_password_checks_total{result="match",scheme="argon2id"} 1"#,
            r#"simpleauth_password_checks_total{result="mismatch",scheme="dummy"} 1"#,
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
    }

    #[actix_rt::test]
    async fn an_unusable_hash_pays_the_decoy_and_counts_once_as_unusable() {
        let metrics = crate::metrics::Metrics::new().expect("metrics");
        let verifier = PasswordVerifier::new(2, metrics.password_checks());
        // Rejecting "$bcrypt..." takes microseconds; the decoy argon2id run
        // (m=19456, t=2) takes milliseconds on any machine.
        let started = Instant::now();
        let unusable = verifier.verify("pw".into(), "$bcrypt$2b$10$abc".into()).await.expect("ran");
        assert!(matches!(unusable, Verification::Unusable(_)), "{unusable:?}");
        assert!(started.elapsed() >= Duration::from_millis(2), "no decoy run: {:?}", started.elapsed());
        let text = text(&metrics);
        for line in [
            r#"simpleauth_password_checks_total{result="unusable",scheme="unknown"} 1"#,
            r#"simpleauth_password_checks_total{result="mismatch",scheme="dummy"} 0"#,
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
    }
}
