//! `PasswordVerifier`: runs the password checks of `password_hashes` off the
//! async executor, counts them, and pays the decoy argon2id run that keeps an
//! unknown user, an unusable stored hash or a legacy-HMAC user's wrong
//! password from being told apart from an argon2id user's by timing (§8).
//!
//! Every argon2id run (a stored argon2id hash, the unknown-user decoy, the
//! decoy after an unusable hash or a legacy mismatch) must first be admitted
//! by `PasswordCheckLimit` (MAX_PASSWORD_CHECKS, contract §8): no permit free
//! means `ApiError::Overloaded` at once, before the run. A legacy HMAC match
//! (microseconds) needs no permit.

use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::api_error::ApiError;
use crate::metrics::PasswordChecks;
use crate::password_check_limit::{Admitted, PasswordCheckLimit};
use crate::password_hashes::{DUMMY_ARGON2ID_HASH, Scheme, Verification, is_costly, verify};

/// Admitted checks run at most `cores` at a time in the process: each
/// one holds 19 MiB and a core for ~20-50 ms, so more at once only adds
/// memory and queueing, not throughput. The others wait for a core (async,
/// holding their admission).
#[derive(Clone)]
pub struct PasswordVerifier {
    cores: Arc<Semaphore>,
    admission: PasswordCheckLimit,
    checks: PasswordChecks,
}

impl PasswordVerifier {
    /// `cores`: argon2id runs at once; `max_checks`: checks admitted at once
    /// (running or waiting), MAX_PASSWORD_CHECKS.
    pub fn new(cores: usize, max_checks: usize, checks: PasswordChecks) -> Self {
        PasswordVerifier {
            cores: Arc::new(Semaphore::new(cores.max(1))),
            admission: PasswordCheckLimit::new(max_checks),
            checks,
        }
    }

    /// Verifies a known user's password (the legacy scheme inline). An
    /// unusable stored hash and a legacy mismatch also pay the decoy run of
    /// `verify_unknown_user`, counted once, as `unusable` or as the legacy
    /// `mismatch`. `Err(Overloaded)` when an argon2id run would be needed and
    /// none is admitted; nothing was counted then.
    pub async fn verify(&self, password: String, stored: String) -> Result<Verification, ApiError> {
        let scheme = Scheme::of(&stored);
        if !is_costly(&stored) {
            let verification = verify(password.as_bytes(), &stored);
            if verification != Verification::Match {
                let admitted = self.admit()?;
                self.checks.record(scheme, verification);
                self.run(admitted, move |_| verify(b"", DUMMY_ARGON2ID_HASH)).await?;
            } else {
                self.checks.record(scheme, verification);
            }
            return Ok(verification);
        }
        let admitted = self.admit()?;
        let (verification, admitted) =
            self.run(admitted, move |admitted| (verify(password.as_bytes(), &stored), admitted)).await?;
        self.checks.record(scheme, verification);
        if matches!(verification, Verification::Unusable(_)) {
            // The same admission covers the decoy: one check of this request.
            self.run(admitted, move |_| verify(b"", DUMMY_ARGON2ID_HASH)).await?;
        }
        Ok(verification)
    }

    /// The decoy argon2id run for an unknown user: what a wrong password of an
    /// argon2id user costs (counted as the `dummy` scheme).
    pub async fn verify_unknown_user(&self, password: String) -> Result<(), ApiError> {
        let admitted = self.admit()?;
        let verification = self.run(admitted, move |_| verify(password.as_bytes(), DUMMY_ARGON2ID_HASH)).await?;
        self.checks.record(Scheme::Dummy, verification);
        Ok(())
    }

    /// Checks admitted now could still start (for tests and diagnostics).
    pub fn admission(&self) -> &PasswordCheckLimit {
        &self.admission
    }

    fn admit(&self) -> Result<Admitted, ApiError> {
        self.admission.try_admit().ok_or(ApiError::Overloaded)
    }

    /// Waits for a core, then runs `work` on tokio's blocking pool. The
    /// admission is handed to `work`, so it is held until the check is done
    /// even if the request goes away meanwhile (the blocking task runs on),
    /// and given back however `work` ends (a panic included).
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        admitted: Admitted,
        work: impl FnOnce(Admitted) -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let core = Arc::clone(&self.cores).acquire_owned().await.map_err(|_| ApiError::Internal)?;
        tokio::task::spawn_blocking(move || {
            let _core = core;
            work(admitted)
        })
        .await
        .map_err(|e| {
            tracing::error!("password verification task failed: {e}");
            ApiError::Internal
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OTHER_PARAMS: &str =
        "$argon2id$v=19$m=8192,t=1,p=2$wewKX1x3DjMtbzJIm1KiAw$Wzz246VuwyT7Q3BxZXS/++K1hI9zDy+fJ+7R1CKe3MU";

    fn text(metrics: &crate::metrics::Metrics) -> String {
        let pool = deadpool_postgres::Status { max_size: 1, size: 0, available: 0, waiting: 0 };
        String::from_utf8(metrics.render(pool)).expect("utf-8")
    }

    #[tokio::test]
    async fn verifier_runs_argon2id_off_the_executor() {
        let metrics = crate::metrics::Metrics::new().expect("metrics");
        let verifier = PasswordVerifier::new(2, 8, metrics.password_checks());
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

    /// Yields to the test's runtime until `done` holds (the spawned tasks run
    /// meanwhile); a bounded number of times, so a broken check fails rather
    /// than hangs.
    async fn until(what: &str, done: impl Fn() -> bool) {
        for _ in 0..1_000_000 {
            if done() {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("never happened: {what}");
    }

    #[tokio::test]
    async fn an_unusable_hash_pays_the_decoy_and_counts_once_as_unusable() {
        let metrics = crate::metrics::Metrics::new().expect("metrics");
        let verifier = PasswordVerifier::new(1, 8, metrics.password_checks());
        // Rejecting "$bcrypt..." needs no core; the decoy argon2id run does. With
        // the one core held here, the check is admitted and then waits for it.
        let core = Arc::clone(&verifier.cores).acquire_owned().await.expect("the core");
        let check = tokio::spawn({
            let verifier = verifier.clone();
            async move { verifier.verify("pw".into(), "$bcrypt$2b$10$abc".into()).await }
        });
        until("the check admitted or done", || verifier.admission().available() == 7 || check.is_finished()).await;
        assert!(!check.is_finished(), "an unusable hash must wait for a core: its decoy argon2id run");
        drop(core);
        let unusable = check.await.expect("joined").expect("ran");
        assert!(matches!(unusable, Verification::Unusable(_)), "{unusable:?}");
        assert_eq!(verifier.admission().available(), 8, "given back after the decoy");
        let text = text(&metrics);
        for line in [
            r#"simpleauth_password_checks_total{result="unusable",scheme="unknown"} 1"#,
            r#"simpleauth_password_checks_total{result="mismatch",scheme="dummy"} 0"#,
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
    }

    #[tokio::test]
    async fn a_legacy_mismatch_pays_the_decoy_and_counts_once() {
        let metrics = crate::metrics::Metrics::new().expect("metrics");
        let verifier = PasswordVerifier::new(1, 8, metrics.password_checks());
        let legacy = "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE=";
        // With the one core held here, the mismatch is admitted and then waits for it: its decoy run.
        let core = Arc::clone(&verifier.cores).acquire_owned().await.expect("the core");
        let check = tokio::spawn({
            let verifier = verifier.clone();
            async move { verifier.verify("wrong".into(), legacy.into()).await }
        });
        until("the check admitted or done", || verifier.admission().available() == 7 || check.is_finished()).await;
        assert!(!check.is_finished(), "a legacy mismatch must wait for a core: its decoy argon2id run");
        drop(core);
        assert_eq!(check.await.expect("joined").expect("ran"), Verification::Mismatch);
        assert_eq!(verifier.admission().available(), 8, "given back after the decoy");
        let text = text(&metrics);
        for line in [
            r#"simpleauth_password_checks_total{result="mismatch",scheme="hmac-sha256"} 1"#,
            r#"simpleauth_password_checks_total{result="mismatch",scheme="dummy"} 0"#,
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
    }

    #[tokio::test]
    async fn argon2id_checks_are_shed_when_no_permit_is_free_and_legacy_matches_are_not() {
        let metrics = crate::metrics::Metrics::new().expect("metrics");
        let verifier = PasswordVerifier::new(1, 2, metrics.password_checks());
        let held = (verifier.admission().try_admit().expect("1"), verifier.admission().try_admit().expect("2"));
        let legacy = "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE=";
        for result in [
            verifier.verify("pw".into(), OTHER_PARAMS.into()).await,
            verifier.verify("pw".into(), "$bcrypt$2b$10$abc".into()).await,
            verifier.verify("wrong".into(), legacy.into()).await,
            verifier.verify_unknown_user("pw".into()).await.map(|()| Verification::Mismatch),
        ] {
            assert!(matches!(result, Err(ApiError::Overloaded)), "{result:?}");
        }
        assert_eq!(verifier.verify("TopSecret0!".into(), legacy.into()).await.expect("inline"), Verification::Match);
        // A shed check is not counted; the legacy match is.
        let text = text(&metrics);
        assert!(
            text.lines()
                .filter(|l| l.starts_with("simpleauth_password_checks_total{") && !l.contains("\"match\""))
                .all(|l| l.ends_with(" 0")),
            "{text}"
        );
        drop(held);
        assert_eq!(verifier.admission().available(), 2);
        verifier.verify_unknown_user("pw".into()).await.expect("admitted again");
        assert_eq!(verifier.admission().available(), 2, "given back after the check");
    }

    #[tokio::test]
    async fn the_permit_is_held_while_the_check_runs_and_given_back_when_it_fails() {
        let metrics = crate::metrics::Metrics::new().expect("metrics");
        let verifier = PasswordVerifier::new(1, 1, metrics.password_checks());
        let (seen_tx, seen_rx) = std::sync::mpsc::channel();
        let admitted = verifier.admission().try_admit().expect("free");
        let check = verifier.run(admitted, {
            let admission = verifier.admission().clone();
            move |_admitted| seen_tx.send(admission.available()).expect("send")
        });
        check.await.expect("ran");
        assert_eq!(seen_rx.recv().expect("seen"), 0, "held while running");
        assert_eq!(verifier.admission().available(), 1, "given back after");

        let admitted = verifier.admission().try_admit().expect("free");
        let failed = verifier.run(admitted, |_admitted| -> () { panic!("the check failed") }).await;
        assert!(matches!(failed, Err(ApiError::Internal)), "{failed:?}");
        assert_eq!(verifier.admission().available(), 1, "given back after a failure");
    }

    #[tokio::test]
    async fn a_check_whose_request_goes_away_while_waiting_for_a_core_gives_its_permit_back() {
        let metrics = crate::metrics::Metrics::new().expect("metrics");
        let verifier = PasswordVerifier::new(1, 2, metrics.password_checks());
        // The one core is taken by a check that runs until told to stop.
        let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
        let first = verifier.admission().try_admit().expect("free");
        let running = tokio::spawn({
            let verifier = verifier.clone();
            async move { verifier.run(first, move |_admitted| stop_rx.recv()).await }
        });
        until("the first check holding the core", || verifier.cores.available_permits() == 0).await;
        let second = verifier.admission().try_admit().expect("free");
        assert_eq!(verifier.admission().available(), 0);
        {
            // Polled a while, then dropped (its request went away) while it waits for the core.
            let waiting = verifier.run(second, |_admitted| ());
            tokio::pin!(waiting);
            for _ in 0..100 {
                tokio::select! {
                    biased;
                    _ = &mut waiting => panic!("the second check got the core the first one holds"),
                    () = tokio::task::yield_now() => {}
                }
            }
        }
        assert_eq!(verifier.admission().available(), 1, "dropped while waiting: its permit is back");
        stop_tx.send(()).expect("stop");
        running.await.expect("joined").expect("ran").expect("stopped");
        assert_eq!(verifier.admission().available(), 2);
    }
}
