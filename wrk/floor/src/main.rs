//! The benchmark's floor: `POST /token` with a JSON password grant answers
//! 200 with an access token and an ID token signed by simple-auth-core's
//! `TokenSigner` (the same key, claims and aws-lc-rs signer as actix and
//! axum), and does nothing else: no database, no password check, no session,
//! no limits, no metrics. What a stack needs per login beyond this is its own
//! cost; what this costs, and its tails at each load, are what the machine and
//! the harness allow (docs/benchmark.md, "The floor").
//!
//! Environment: `PORT` (required), `HOST` (default 127.0.0.1),
//! `JWT_PRIVATE_KEY_FILE`, `JWT_ISSUER`, `JWT_AUDIENCE` (required),
//! `TOKEN_TTL_SECONDS` (default 600), `DEFAULT_CLIENT_ID` (default `public`);
//! the contract's other variables are ignored. A refused start exits 2.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::thread::available_parallelism;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::serve::ListenerExt as _;
use bytes::Bytes;
use simple_auth_core::token_request::{Grant, TokenRequest};
use simple_auth_core::token_signer::TokenSigner;
use simple_auth_core::user::User;
use uuid::Uuid;

/// The `sub` of every token: the floor has no users.
const USER_ID: Uuid = Uuid::from_u128(0x0f10_0f10_0f10_4f10_8f10_0f10_0f10_0f10);

struct Floor {
    signer: TokenSigner,
    default_client_id: String,
}

fn var(name: &str) -> Result<String, String> {
    std::env::var(name).ok().filter(|v| !v.is_empty()).ok_or_else(|| format!("{name} is required"))
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("simple-auth-floor: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let port: u16 = var("PORT")?.parse().map_err(|_| "PORT must be a port number".to_owned())?;
    let host = std::env::var("HOST").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| "127.0.0.1".into());
    let addr: SocketAddr = format!("{host}:{port}").parse().map_err(|_| format!("HOST {host} is not an address"))?;
    let key_file = var("JWT_PRIVATE_KEY_FILE")?;
    let pem = std::fs::read_to_string(&key_file).map_err(|e| format!("JWT_PRIVATE_KEY_FILE={key_file}: {e}"))?;
    let ttl = match std::env::var("TOKEN_TTL_SECONDS").ok().filter(|v| !v.is_empty()) {
        Some(v) => v.parse().map_err(|_| "TOKEN_TTL_SECONDS must be a whole number".to_owned())?,
        None => 600,
    };
    let signer =
        TokenSigner::from_pem(&pem, var("JWT_ISSUER")?, var("JWT_AUDIENCE")?, ttl).map_err(|e| e.to_string())?;
    let default_client_id =
        std::env::var("DEFAULT_CLIENT_ID").ok().filter(|v| !v.is_empty()).unwrap_or("public".into());
    let floor = Arc::new(Floor { signer, default_client_id });
    // One worker per core, as axum's service runs; the signature is signed on the worker itself (no hand-off).
    let cores = available_parallelism().map(|n| n.get()).unwrap_or(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the tokio runtime: {e}"))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("cannot bind {addr}: {e}"))?;
        // As every stack: each answer goes out at once (no Nagle delay behind the previous segment's ACK).
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        eprintln!("simple-auth-floor: listening on {addr}");
        let app = Router::new().route("/token", post(token)).with_state(floor);
        axum::serve(listener, app).await.map_err(|e| format!("serve: {e}"))
    })
}

fn answer(status: StatusCode, body: String) -> Response {
    let headers = [
        (header::CONTENT_TYPE, HeaderValue::from_static("application/json")),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
    ];
    (status, headers, body).into_response()
}

/// The password grant's answer without the password: the request read, the two tokens signed.
async fn token(State(floor): State<Arc<Floor>>, body: Bytes) -> Response {
    let request = match TokenRequest::from_json(&body) {
        Ok(request) => request,
        Err(_) => return answer(StatusCode::BAD_REQUEST, r#"{"error":"invalid_request"}"#.into()),
    };
    let Grant::Password { username, .. } = request.grant else {
        return answer(StatusCode::BAD_REQUEST, r#"{"error":"unsupported_grant_type"}"#.into());
    };
    let user =
        User { id: USER_ID, name: username.clone(), email: username.clone(), username, password_hash: String::new() };
    let client_id = request.client_id.as_deref().unwrap_or(&floor.default_client_id);
    match floor.signer.issue(&user, client_id, Uuid::new_v4()) {
        Ok(pair) => answer(
            StatusCode::OK,
            serde_json::json!({
                "access_token": pair.access_token,
                "id_token": pair.id_token,
                "token_type": "Bearer",
                "expires_in": pair.expires_in,
            })
            .to_string(),
        ),
        Err(_) => answer(StatusCode::INTERNAL_SERVER_ERROR, r#"{"error":"server_error"}"#.into()),
    }
}
