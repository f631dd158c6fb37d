//! The service's log lines that do not depend on the web framework: the
//! subscriber, the one start-up line and the end of a run. Nothing is logged
//! per request; passwords, hashes, tokens and keys never are.

use std::io::IsTerminal as _;
use std::process::ExitCode;

use tracing::Level;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::key_set::KeySet;
use crate::settings::Settings;

/// Logs at `level` to stdout. `framework_targets` (the web framework's
/// crates) are held to warn unless `level` is debug or finer, so the one
/// start-up line stays the service's own.
pub fn init_logging(level: Level, framework_targets: &[&str]) {
    let framework = if level >= Level::DEBUG { level } else { Level::WARN.min(level) };
    let filter = framework_targets
        .iter()
        .fold(Targets::new().with_default(level), |filter, target| filter.with_target(*target, framework))
        // deadpool-postgres warns once per dropped connection; OutageLog
        // already logs an outage once, with its cause.
        .with_target("deadpool.postgres", if level >= Level::DEBUG { level } else { Level::ERROR });
    let _ = tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_ansi(std::io::stdout().is_terminal()).with_target(false))
        .with(filter)
        .try_init();
}

/// The start-up line: who listens where, with which pool, limit and keys.
pub fn listening_line(stack: &str, version: &str, settings: &Settings, workers: usize, keys: &KeySet) -> String {
    let key_bits = keys.signer.rsa_bits().map(|bits| format!(" key_bits={bits}")).unwrap_or_default();
    format!(
        "{stack} {version} listening on {}:{} metrics port {} workers={workers} db_pool_size={} max_password_checks={} kid={} alg={:?} issuer={} audience={} published_keys={}{key_bits}",
        settings.host,
        settings.port,
        settings.metrics_port,
        settings.pool_size,
        settings.max_password_checks,
        keys.signer.kid(),
        keys.signer.alg(),
        settings.issuer,
        settings.audience,
        keys.published,
    )
}

/// The end of a server that had started: 0 after a graceful stop, 1 (and
/// one line on stderr) when it failed.
pub fn exit_code(stack: &str, result: Result<(), impl std::fmt::Display>) -> ExitCode {
    match result {
        Ok(()) => {
            tracing::info!("{stack} stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{stack}: server error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{ISSUER, app_state};

    #[test]
    fn the_start_up_line_names_the_pool_the_limit_and_the_key() {
        let extra = [("DB_POOL_SIZE", "7"), ("MAX_PASSWORD_CHECKS", "5")];
        let settings = Settings::from_lookup(|name| match name {
            "JWT_PRIVATE_KEY" => Some("unused here".into()),
            _ => extra.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string()),
        })
        .expect("settings");
        let keys = app_state(&extra, "test").keys.current();
        let line = listening_line("simple-auth-x", "1.2.3", &settings, 2, &keys);
        let start = "simple-auth-x 1.2.3 listening on 0.0.0.0:8080 metrics port 9091 workers=2 db_pool_size=7 max_password_checks=5 kid=";
        assert!(line.starts_with(start), "{line}");
        let end = format!(" alg=RS256 issuer={ISSUER} audience=channel-api published_keys=1 key_bits=2048");
        assert!(line.ends_with(&end), "{line}");
    }
}
