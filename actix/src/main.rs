//! The service: settings, logging, the server, signals, exit codes.

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::thread::available_parallelism;

use actix_web::{App, HttpServer, web};
use deadpool_postgres::Pool;
use simple_auth_actix::app_state::AppState;
use simple_auth_actix::key_set::{KeySet, Keys};
use simple_auth_actix::metrics::Metrics;
use simple_auth_actix::pool::create_pool;
use simple_auth_actix::settings::Settings;
use simple_auth_actix::{EXIT_REFUSED, STACK, VERSION, handlers, parsed_key_provider};
use tracing::Level;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Workers get this long to finish in-flight requests after SIGTERM/SIGINT.
const SHUTDOWN_TIMEOUT_SECS: u64 = 10;

fn main() -> ExitCode {
    if let Some(other) = std::env::args().nth(1) {
        eprintln!("{STACK}: unknown argument '{other}'; run without arguments to serve");
        return ExitCode::from(EXIT_REFUSED);
    }
    actix_web::rt::System::new().block_on(serve())
}

/// A refused start is one line on stderr (no backtrace) and exit code 2; a
/// server that fails after it started exits 1.
async fn serve() -> ExitCode {
    let (server, pool) = match start() {
        Ok(started) => started,
        Err(message) => {
            eprintln!("{STACK}: {message}");
            return ExitCode::from(EXIT_REFUSED);
        }
    };
    let result = server.await;
    pool.close();
    match result {
        Ok(()) => {
            tracing::info!("{STACK} stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{STACK}: server error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Everything that may refuse the start: settings, keys, TLS files, the port.
fn start() -> Result<(actix_web::dev::Server, Pool), String> {
    let settings = Settings::from_env().map_err(|e| e.to_string())?;
    init_logging(settings.log_level);
    parsed_key_provider::seed_random_in_background();

    let keys = KeySet::load(&settings).map_err(|e| e.to_string())?;
    let kid = keys.signer.kid().to_owned();
    let alg = keys.signer.alg();
    let published = keys.published;
    let key_bits = keys.signer.rsa_bits().map(|bits| format!(" key_bits={bits}")).unwrap_or_default();
    let keys = Arc::new(Keys::new(keys));

    let pool = create_pool(&settings).map_err(|e| e.to_string())?;
    let cores = available_parallelism().map(|n| n.get()).unwrap_or(1);
    let metrics = Metrics::new().map_err(|e| format!("metrics set-up failed: {e}"))?;
    let reloads = metrics.key_reloads();
    let state = web::Data::new(AppState::new(pool.clone(), Arc::clone(&keys), &settings, metrics, cores));

    let server = HttpServer::new(move || App::new().app_data(state.clone()).configure(handlers::routes))
        // Blocking threads run argon2id (bounded by PasswordVerifier to
        // `cores` at once, MAX_PASSWORD_CHECKS admitted) and token signing;
        // any worker may need all of them.
        .worker_max_blocking_threads(cores)
        .shutdown_timeout(SHUTDOWN_TIMEOUT_SECS)
        .shutdown_signal(shutdown_signal())
        .bind((settings.host.as_str(), settings.port))
        .map_err(|e| format!("cannot listen on {}:{}: {e}", settings.host, settings.port))?;

    // Installed before the server runs: from here on SIGHUP reloads the keys
    // instead of ending the process (its default action).
    reload_keys_on_sighup(keys, settings.clone(), reloads)?;

    tracing::info!(
        "{STACK} {VERSION} listening on {}:{} workers={cores} db_pool_size={} max_password_checks={} kid={kid} alg={alg:?} issuer={} audience={} published_keys={published}{key_bits}",
        settings.host,
        settings.port,
        settings.pool_size,
        settings.max_password_checks,
        settings.issuer,
        settings.audience,
    );
    Ok((server.run(), pool))
}

/// On each SIGHUP, the signing key and JWT_PUBLIC_KEYS_FILE are read again
/// (off the workers, on the blocking pool) and swapped in if they are good
/// (`Keys::reload` logs and counts either outcome). Nothing here stops the
/// process.
fn reload_keys_on_sighup(
    keys: Arc<Keys>,
    settings: Settings,
    reloads: simple_auth_actix::metrics::KeyReloads,
) -> Result<(), String> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut hangup = signal(SignalKind::hangup()).map_err(|e| format!("cannot install the SIGHUP handler: {e}"))?;
    let settings = Arc::new(settings);
    actix_web::rt::spawn(async move {
        while hangup.recv().await.is_some() {
            let (keys, settings, reloads) = (Arc::clone(&keys), Arc::clone(&settings), reloads.clone());
            if let Err(e) = web::block(move || keys.reload(&settings, &reloads).is_ok()).await {
                tracing::error!("key reload task failed: {e}");
            }
        }
    });
    Ok(())
}

/// SIGTERM and SIGINT both stop gracefully: stop accepting, let in-flight
/// requests finish (up to the shutdown timeout). actix-server's own handler
/// treats SIGINT as a forced stop, hence this.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        tracing::error!("cannot install signal handlers; stop the process with SIGKILL");
        return std::future::pending().await;
    };
    let name = tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
    };
    tracing::info!("{name} received; finishing in-flight requests");
}

fn init_logging(level: Level) {
    // actix-server announces workers and signals at info; keep the one
    // start-up line ours unless debugging.
    let framework = if level >= Level::DEBUG { level } else { Level::WARN.min(level) };
    let filter = Targets::new()
        .with_default(level)
        .with_target("actix_server", framework)
        .with_target("actix_http", framework)
        .with_target("actix_web", framework)
        // deadpool-postgres warns once per dropped connection; DatabaseOutage
        // already logs an outage once, with its cause.
        .with_target("deadpool.postgres", if level >= Level::DEBUG { level } else { Level::ERROR });
    let _ = tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_ansi(std::io::stdout().is_terminal()).with_target(false))
        .with(filter)
        .try_init();
}
