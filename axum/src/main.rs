//! The service: settings, logging, the tokio runtime, `axum::serve`, signals,
//! exit codes.

use std::io::IsTerminal as _;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::thread::available_parallelism;
use std::time::Duration;

use axum::serve::ListenerExt as _;
use deadpool_postgres::Pool;
use simple_auth_axum::app_state::AppState;
use simple_auth_axum::key_set::{KeySet, Keys};
use simple_auth_axum::metrics::{KeyReloads, Metrics};
use simple_auth_axum::pool::create_pool;
use simple_auth_axum::settings::Settings;
use simple_auth_axum::{EXIT_REFUSED, STACK, VERSION, parsed_key_provider, routes};
use tokio::net::TcpListener;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::Notify;
use tracing::Level;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

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
    init_logging(settings.log_level);
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
    state: Arc<AppState>,
    pool: Pool,
    stop: StopSignals,
}

/// Serves until SIGTERM or SIGINT, then drains (up to `SHUTDOWN_TIMEOUT`),
/// closes the pool and exits 0; a server that fails after it started exits 1.
async fn serve(settings: Settings, cores: usize) -> ExitCode {
    let Started { listener, state, pool, stop } = match start(&settings, cores).await {
        Ok(started) => started,
        Err(message) => return refused(message),
    };
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY could not be set on a connection: {e}");
        }
    });
    let stopping = Arc::new(Notify::new());
    let app = routes::router(state).into_make_service_with_connect_info::<SocketAddr>();
    let server = axum::serve(listener, app).with_graceful_shutdown(stop.received(Arc::clone(&stopping)));
    let result = tokio::select! {
        result = server.into_future() => result,
        () = drain_deadline(stopping) => Ok(()),
    };
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

/// Everything that may refuse the start: keys, TLS files, the port, signals.
async fn start(settings: &Settings, cores: usize) -> Result<Started, String> {
    let keys = KeySet::load(settings).map_err(|e| e.to_string())?;
    let kid = keys.signer.kid().to_owned();
    let alg = keys.signer.alg();
    let published = keys.published;
    let key_bits = keys.signer.rsa_bits().map(|bits| format!(" key_bits={bits}")).unwrap_or_default();
    let keys = Arc::new(Keys::new(keys));

    let pool = create_pool(settings).map_err(|e| e.to_string())?;
    let metrics = Metrics::new().map_err(|e| format!("metrics set-up failed: {e}"))?;
    let reloads = metrics.key_reloads();
    let state = Arc::new(AppState::new(pool.clone(), Arc::clone(&keys), settings, metrics, cores));

    let listener = TcpListener::bind((settings.host.as_str(), settings.port))
        .await
        .map_err(|e| format!("cannot listen on {}:{}: {e}", settings.host, settings.port))?;
    // Installed before the server runs: from here on SIGTERM and SIGINT stop
    // it gracefully and SIGHUP reloads the keys instead of ending the process
    // (their default actions).
    let stop = StopSignals::install()?;
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
    Ok(Started { listener, state, pool, stop })
}

/// On each SIGHUP, the signing key and JWT_PUBLIC_KEYS_FILE are read again
/// (on the blocking pool: file reads and key parsing) and swapped in if they
/// are good (`Keys::reload` logs and counts either outcome). Nothing here
/// stops the process.
fn reload_keys_on_sighup(keys: Arc<Keys>, settings: Settings, reloads: KeyReloads) -> Result<(), String> {
    let mut hangup = signal(SignalKind::hangup()).map_err(|e| format!("cannot install the SIGHUP handler: {e}"))?;
    let settings = Arc::new(settings);
    tokio::spawn(async move {
        while hangup.recv().await.is_some() {
            let (keys, settings, reloads) = (Arc::clone(&keys), Arc::clone(&settings), reloads.clone());
            if let Err(e) = tokio::task::spawn_blocking(move || keys.reload(&settings, &reloads).is_ok()).await {
                tracing::error!("key reload task failed: {e}");
            }
        }
    });
    Ok(())
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

    /// Completes at the first SIGTERM or SIGINT (axum then stops accepting
    /// and lets every connection finish its request in flight), and tells
    /// `stopping`.
    async fn received(mut self, stopping: Arc<Notify>) {
        let name = tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
        };
        tracing::info!("{name} received; finishing in-flight requests");
        stopping.notify_one();
    }
}

/// Completes `SHUTDOWN_TIMEOUT` after the stop signal: requests still in
/// flight then are abandoned.
async fn drain_deadline(stopping: Arc<Notify>) {
    stopping.notified().await;
    tokio::time::sleep(SHUTDOWN_TIMEOUT).await;
    tracing::warn!("requests still in flight after {SHUTDOWN_TIMEOUT:?}; stopping without them");
}

fn init_logging(level: Level) {
    // hyper and axum say little above debug; keep their chatter out unless
    // debugging.
    let framework = if level >= Level::DEBUG { level } else { Level::WARN.min(level) };
    let filter = Targets::new()
        .with_default(level)
        .with_target("hyper", framework)
        .with_target("hyper_util", framework)
        .with_target("axum", framework)
        .with_target("tower_http", framework)
        // deadpool-postgres warns once per dropped connection; DatabaseOutage
        // already logs an outage once, with its cause.
        .with_target("deadpool.postgres", if level >= Level::DEBUG { level } else { Level::ERROR });
    let _ = tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_ansi(std::io::stdout().is_terminal()).with_target(false))
        .with(filter)
        .try_init();
}
