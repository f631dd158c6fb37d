//! simple-auth on actix-web 4: issues RS256 ID and access tokens after
//! checking a password against the channel API's `users` table.

mod config;
mod db;
mod errors;
mod handlers;
mod metrics;
mod passwords;
mod signbench;
#[cfg(test)]
mod test_vectors;
#[cfg(test)]
mod tests;
mod tls;
mod tokens;

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::thread::available_parallelism;

use actix_web::{App, HttpServer, web};
use tracing::Level;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use crate::config::{Config, KeySource};
use crate::db::UserRepository;
use crate::handlers::AppState;
use crate::passwords::PasswordVerifier;
use crate::tokens::TokenSigner;

const STACK: &str = "simple-auth-actix";
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// Workers get this long to finish in-flight requests after SIGTERM/SIGINT.
const SHUTDOWN_TIMEOUT_SECS: u64 = 10;

/// No arguments: serve. `signbench SECONDS`: measure this stack's own signing
/// speed instead (see `signbench.rs`).
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.split_first() {
        None => actix_web::rt::System::new().block_on(serve()),
        Some((command, rest)) if command == "signbench" => signbench::main(rest),
        Some((other, _)) => {
            eprintln!("{STACK}: unknown argument '{other}'; run without arguments to serve\n{}", signbench::USAGE);
            ExitCode::from(2)
        }
    }
}

async fn serve() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            // One clear line, no backtrace.
            eprintln!("{STACK}: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The signing key from JWT_PRIVATE_KEY_FILE or JWT_PRIVATE_KEY, checked and
/// parsed once.
fn load_signer(config: &Config) -> Result<TokenSigner, String> {
    let pem = match &config.key {
        KeySource::File(path) => std::fs::read_to_string(path).map_err(|e| {
            tokens::KeyError::Unreadable { path: format!("JWT_PRIVATE_KEY_FILE={path}"), reason: e.to_string() }
                .to_string()
        })?,
        KeySource::Inline(pem) => pem.clone(),
    };
    TokenSigner::from_pem(&pem, config.issuer.clone(), config.audience.clone(), config.token_ttl_seconds)
        .map_err(|e| e.to_string())
}

async fn run() -> Result<(), String> {
    let config = Config::from_env().map_err(|e| e.to_string())?;
    init_logging(config.log_level);
    tokens::seed_random_in_background();

    let signer = load_signer(&config)?;
    let kid = signer.kid().to_owned();
    let key_bits = signer.bits();

    let pool = db::create_pool(&config).map_err(|e| e.to_string())?;
    let cores = available_parallelism().map(|n| n.get()).unwrap_or(1);
    let metrics = metrics::Metrics::new().map_err(|e| format!("metrics set-up failed: {e}"))?;
    let passwords = PasswordVerifier::new(cores, metrics.password_checks());
    let state = web::Data::new(AppState::new(UserRepository::new(pool.clone()), passwords, signer, metrics));

    let server = HttpServer::new(move || App::new().app_data(state.clone()).configure(handlers::routes))
        // Blocking threads run argon2id (bounded by PasswordVerifier to
        // `cores` at once) and token signing; any worker may need all of them.
        .worker_max_blocking_threads(cores)
        .shutdown_timeout(SHUTDOWN_TIMEOUT_SECS)
        .shutdown_signal(shutdown_signal())
        .bind((config.host.as_str(), config.port))
        .map_err(|e| format!("cannot listen on {}:{}: {e}", config.host, config.port))?;

    tracing::info!(
        "{STACK} {VERSION} listening on {}:{} workers={cores} db_pool_size={} kid={kid} issuer={} audience={} key_bits={key_bits}",
        config.host,
        config.port,
        config.pool_size,
        config.issuer,
        config.audience,
    );

    let result = server.run().await;
    pool.close();
    result.map_err(|e| format!("server error: {e}"))?;
    tracing::info!("{STACK} stopped");
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
        // deadpool-postgres warns once per dropped connection; the repository
        // already logs an outage once, with its cause.
        .with_target("deadpool.postgres", if level >= Level::DEBUG { level } else { Level::ERROR });
    let _ = tracing_subscriber::registry()
        .with(tracing_subscriber::fmt::layer().with_ansi(std::io::stdout().is_terminal()).with_target(false))
        .with(filter)
        .try_init();
}
