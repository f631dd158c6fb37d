//! The service: settings, logging, the server, signals, exit codes.

use std::process::ExitCode;
use std::sync::Arc;
use std::thread::available_parallelism;

use actix_web::dev::Server;
use actix_web::{App, HttpServer, web};
use deadpool_postgres::Pool;
use simple_auth_actix::{STACK, VERSION, handlers};
use simple_auth_core::app_state::AppState;
use simple_auth_core::key_set::{self, KeyRing, KeySet};
use simple_auth_core::metrics::Metrics;
use simple_auth_core::pool::{Retirement, create_pool, retire_idle_connections};
use simple_auth_core::settings::Settings;
use simple_auth_core::{EXIT_REFUSED, logging, parsed_key_provider};

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
    let Started { server, metrics, pool } = match start() {
        Ok(started) => started,
        Err(message) => {
            eprintln!("{STACK}: {message}");
            return ExitCode::from(EXIT_REFUSED);
        }
    };
    // The metrics server has no signal handling of its own: it stops when
    // the public one has (after SIGTERM/SIGINT, or a failure).
    let metrics_handle = metrics.handle();
    let metrics = actix_web::rt::spawn(metrics);
    let result = server.await;
    metrics_handle.stop(true).await;
    let metrics_result = metrics.await.unwrap_or(Ok(()));
    pool.close();
    logging::exit_code(STACK, result.and(metrics_result))
}

/// The two servers, not yet polled, and the pool.
struct Started {
    /// The public port (PORT).
    server: Server,
    /// The metrics port (METRICS_PORT): `GET /metrics` only.
    metrics: Server,
    pool: Pool,
}

/// Everything that may refuse the start: settings, keys, TLS files, the ports.
fn start() -> Result<Started, String> {
    let settings = Settings::from_env().map_err(|e| e.to_string())?;
    // The framework's own info lines (workers, signals) are held to warn
    // unless debugging.
    logging::init_logging(settings.log_level, &["actix_server", "actix_http", "actix_web"]);
    parsed_key_provider::seed_random_in_background();

    let keys = KeySet::load(&settings).map_err(|e| e.to_string())?;
    let cores = available_parallelism().map(|n| n.get()).unwrap_or(1);
    let listening = logging::listening_line(STACK, VERSION, &settings, cores, &keys);
    let keys = Arc::new(KeyRing::new(keys));

    let pool = create_pool(&settings, STACK).map_err(|e| e.to_string())?;
    retire_idle_connections(pool.clone(), Retirement::of(&settings));
    let metrics = Metrics::new().map_err(|e| format!("metrics set-up failed: {e}"))?;
    let reloads = metrics.key_reloads();
    let state = web::Data::new(AppState::new(pool.clone(), Arc::clone(&keys), &settings, metrics, cores));

    let metrics_state = state.clone();
    let server = HttpServer::new(move || App::new().app_data(state.clone()).configure(handlers::routes))
        // Blocking threads run argon2id (bounded by PasswordVerifier to
        // `cores` at once, MAX_PASSWORD_CHECKS admitted) and token signing;
        // any worker may need all of them.
        .worker_max_blocking_threads(cores)
        .shutdown_timeout(SHUTDOWN_TIMEOUT_SECS)
        .shutdown_signal(shutdown_signal())
        .bind((settings.host.as_str(), settings.port))
        .map_err(|e| format!("cannot listen on {}:{}: {e}", settings.host, settings.port))?;
    // Its own server and App, so nothing of the public port is served here
    // and nothing of this one there; one worker does for a scrape.
    let metrics =
        HttpServer::new(move || App::new().app_data(metrics_state.clone()).configure(handlers::metrics_routes))
            .workers(1)
            .disable_signals()
            .shutdown_timeout(1)
            .bind((settings.host.as_str(), settings.metrics_port))
            .map_err(|e| format!("cannot listen on {}:{} (METRICS_PORT): {e}", settings.host, settings.metrics_port))?;

    // Installed before the server runs: from here on SIGHUP reloads the keys
    // instead of ending the process (its default action).
    key_set::reload_on_sighup(keys, settings.clone(), reloads)?;

    tracing::info!("{listening}");
    Ok(Started { server: server.run(), metrics: metrics.run(), pool })
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
