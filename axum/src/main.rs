//! The service: settings, logging, the tokio runtime, `axum::serve`, signals,
//! exit codes.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::thread::available_parallelism;
use std::time::Duration;

use axum::serve::ListenerExt as _;
use deadpool_postgres::Pool;
use simple_auth_axum::{STACK, VERSION, routes};
use simple_auth_core::app_state::AppState;
use simple_auth_core::key_set::{self, KeyRing, KeySet};
use simple_auth_core::metrics::Metrics;
use simple_auth_core::pool::{Retirement, create_pool, retire_idle_connections};
use simple_auth_core::settings::Settings;
use simple_auth_core::{EXIT_REFUSED, logging, parsed_key_provider};
use tokio::net::TcpListener;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::watch;

/// In-flight requests get this long to finish after SIGTERM/SIGINT.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);
/// Blocking work (an argon2id check, a signature) still running when the
/// server has stopped gets this long before the runtime is dropped.
const BLOCKING_GRACE: Duration = Duration::from_secs(1);

fn main() -> ExitCode {
    if let Some(other) = std::env::args().nth(1) {
        eprintln!("{STACK}: unknown argument '{other}'; run without arguments to serve");
        return ExitCode::from(EXIT_REFUSED);
    }
    let settings = match Settings::from_env() {
        Ok(settings) => settings,
        Err(e) => return refused(e),
    };
    // The framework's own info lines (workers, signals) are held to warn
    // unless debugging.
    logging::init_logging(settings.log_level, &["hyper", "hyper_util", "axum", "tower_http"]);
    parsed_key_provider::seed_random_in_background();

    // One runtime worker per core: the work is CPU-bound (signatures,
    // argon2id), so more only adds context switches. The blocking pool runs
    // argon2id (at most `cores` at once, PasswordVerifier) and the token
    // signatures; twice the cores leaves a signature a thread while every
    // core's argon2id run is in progress.
    let cores = available_parallelism().map(|n| n.get()).unwrap_or(1);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores)
        .max_blocking_threads(2 * cores)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return refused(format!("cannot start the tokio runtime: {e}")),
    };
    let code = runtime.block_on(serve(settings, cores));
    runtime.shutdown_timeout(BLOCKING_GRACE);
    code
}

/// A refused start is one line on stderr (no backtrace) and exit code 2.
fn refused(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("{STACK}: {message}");
    ExitCode::from(EXIT_REFUSED)
}

/// Everything that was set up before the server runs.
struct Started {
    listener: TcpListener,
    /// METRICS_PORT's: `GET /metrics` only.
    metrics_listener: TcpListener,
    state: Arc<AppState>,
    pool: Pool,
    stop: StopSignals,
}

/// Serves both ports until SIGTERM or SIGINT, then drains both (up to
/// `SHUTDOWN_TIMEOUT`), closes the pool and exits 0; a server that fails
/// after it started exits 1.
async fn serve(settings: Settings, cores: usize) -> ExitCode {
    let Started { listener, metrics_listener, state, pool, stop } = match start(&settings, cores).await {
        Ok(started) => started,
        Err(message) => return refused(message),
    };
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY could not be set on a connection: {e}");
        }
    });
    let (stopping, stopped) = watch::channel(false);
    tokio::spawn(stop.received(stopping));
    let metrics_app = routes::metrics_router(Arc::clone(&state)).into_make_service();
    let app = routes::router(state).into_make_service_with_connect_info::<SocketAddr>();
    let server = axum::serve(listener, app).with_graceful_shutdown(stop_requested(stopped.clone()));
    let metrics = axum::serve(metrics_listener, metrics_app).with_graceful_shutdown(stop_requested(stopped.clone()));
    let both = async {
        let (served, scraped) = tokio::join!(server.into_future(), metrics.into_future());
        served.and(scraped)
    };
    let result = tokio::select! {
        result = both => result,
        () = drain_deadline(stopped) => Ok(()),
    };
    pool.close();
    logging::exit_code(STACK, result)
}

/// Everything that may refuse the start: keys, TLS files, the port, signals.
async fn start(settings: &Settings, cores: usize) -> Result<Started, String> {
    let keys = KeySet::load(settings).map_err(|e| e.to_string())?;
    let listening = logging::listening_line(STACK, VERSION, settings, cores, &keys);
    let keys = Arc::new(KeyRing::new(keys));

    let pool = create_pool(settings, STACK).map_err(|e| e.to_string())?;
    retire_idle_connections(pool.clone(), Retirement::of(settings));
    let metrics = Metrics::new().map_err(|e| format!("metrics set-up failed: {e}"))?;
    let reloads = metrics.key_reloads();
    let state = Arc::new(AppState::new(pool.clone(), Arc::clone(&keys), settings, metrics, cores));

    let listener = TcpListener::bind((settings.host.as_str(), settings.port))
        .await
        .map_err(|e| format!("cannot listen on {}:{}: {e}", settings.host, settings.port))?;
    let metrics_listener = TcpListener::bind((settings.host.as_str(), settings.metrics_port))
        .await
        .map_err(|e| format!("cannot listen on {}:{} (METRICS_PORT): {e}", settings.host, settings.metrics_port))?;
    // Installed before the server runs: from here on SIGTERM and SIGINT stop
    // it gracefully and SIGHUP reloads the keys instead of ending the process
    // (their default actions).
    let stop = StopSignals::install()?;
    key_set::reload_on_sighup(keys, settings.clone(), reloads)?;

    tracing::info!("{listening}");
    Ok(Started { listener, metrics_listener, state, pool, stop })
}

/// SIGTERM and SIGINT, both a graceful stop.
struct StopSignals {
    term: Signal,
    int: Signal,
}

impl StopSignals {
    fn install() -> Result<Self, String> {
        let install =
            |kind: SignalKind, name: &str| signal(kind).map_err(|e| format!("cannot install the {name} handler: {e}"));
        Ok(StopSignals {
            term: install(SignalKind::terminate(), "SIGTERM")?,
            int: install(SignalKind::interrupt(), "SIGINT")?,
        })
    }

    /// Completes at the first SIGTERM or SIGINT, and tells `stopping` (both
    /// servers then stop accepting and let every connection finish its
    /// request in flight). Holds `stopping` until then.
    async fn received(mut self, stopping: watch::Sender<bool>) {
        let name = tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
        };
        tracing::info!("{name} received; finishing in-flight requests");
        stopping.send_replace(true);
        // Keep the sender until the process ends: a dropped one would read as a stop.
        std::future::pending::<()>().await;
    }
}

/// Completes once the stop has been signalled.
async fn stop_requested(mut stopped: watch::Receiver<bool>) {
    let _ = stopped.wait_for(|stop| *stop).await;
}

/// Completes `SHUTDOWN_TIMEOUT` after the stop signal: requests still in
/// flight then are abandoned.
async fn drain_deadline(stopped: watch::Receiver<bool>) {
    stop_requested(stopped).await;
    tokio::time::sleep(SHUTDOWN_TIMEOUT).await;
    tracing::warn!("requests still in flight after {SHUTDOWN_TIMEOUT:?}; stopping without them");
}
