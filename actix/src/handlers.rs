//! The HTTP surface: POST /token, GET /.well-known/jwks.json, GET /health,
//! GET /health/live, GET /metrics, and the contract's answers for wrong methods and unknown
//! paths (any method token actix parses, standard or not).

use std::borrow::Cow;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use actix_web::http::header::{self, HeaderValue};
use actix_web::web::{self, Bytes};
use actix_web::{FromRequest, Handler, HttpRequest, HttpResponse, Resource, Responder, guard};
use percent_encoding::percent_decode;
use serde_json::Value;

use crate::db::UserRepository;
use crate::errors::ApiError;
use crate::metrics::{self, Metrics};
use crate::passwords::{Outcome, PasswordVerifier, UnusableHashLog};
use crate::tokens::{Subject, TokenSigner};

/// Largest accepted request body, in bytes (exactly this much is accepted).
pub const MAX_BODY_BYTES: usize = 8192;
pub const MAX_USERNAME_CHARS: usize = 254;
pub const MAX_PASSWORD_BYTES: usize = 1024;

/// Everything the handlers share, built once in `main`.
pub struct AppState {
    pub users: UserRepository,
    pub passwords: PasswordVerifier,
    pub signer: TokenSigner,
    pub jwks: Bytes,
    pub data_errors: UnusableHashLog,
    pub metrics: Metrics,
}

impl AppState {
    pub fn new(users: UserRepository, passwords: PasswordVerifier, signer: TokenSigner, metrics: Metrics) -> Self {
        let jwks = Bytes::copy_from_slice(signer.jwks_json());
        AppState { users, passwords, signer, jwks, data_errors: UnusableHashLog::default(), metrics }
    }
}

/// Registers every route, and the JSON 404/405 answers for everything else.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/token").route(web::post().to(token)).default_service(web::to(post_only)))
        .service(read_only("/.well-known/jwks.json", jwks))
        .service(read_only("/health", health))
        .service(read_only("/health/live", live))
        .service(read_only("/metrics", metrics_text))
        .default_service(web::to(|| async { Err::<HttpResponse, _>(ApiError::NotFound) }));
}

/// The `Allow` value of the read-only endpoints.
pub const ALLOW_GET: &str = "GET, HEAD";

/// A GET endpoint: HEAD runs the same handler (actix's codec sends the
/// headers without the body); any other method is the contract's 405.
fn read_only<F, Args>(path: &str, handler: F) -> Resource
where
    F: Handler<Args>,
    Args: FromRequest + 'static,
    F::Output: Responder + 'static,
{
    web::resource(path)
        .route(web::route().guard(guard::Any(guard::Get()).or(guard::Head())).to(handler))
        .default_service(web::to(|| async { Err::<HttpResponse, _>(ApiError::MethodNotAllowed { allow: ALLOW_GET }) }))
}

async fn post_only() -> Result<HttpResponse, ApiError> {
    Err(ApiError::MethodNotAllowed { allow: "POST" })
}

/// The credentials of a `POST /token`, validated against the contract's limits.
#[derive(Debug, PartialEq, Eq)]
pub struct TokenRequest {
    pub username: String,
    pub password: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyKind {
    Json,
    Form,
}

/// `POST /token`, counted and timed whatever its answer.
async fn token(req: HttpRequest, payload: web::Payload, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let started = Instant::now();
    let result = issue_token(req, payload, &state).await;
    state.metrics.token_request(result.as_ref().map(|_| ()), started.elapsed());
    result
}

/// Checks in the order of spec/README.md: Content-Type (415), size (413),
/// parse and validate (400), credentials, database, signing.
async fn issue_token(
    req: HttpRequest,
    payload: web::Payload,
    state: &web::Data<AppState>,
) -> Result<HttpResponse, ApiError> {
    let kind = body_kind(&req)?;
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if announced.is_some_and(|len| len > MAX_BODY_BYTES as u64) {
        return Err(ApiError::PayloadTooLarge);
    }
    // Read by hand with a limit, so a chunked body is held to it as well.
    let body = match payload.to_bytes_limited(MAX_BODY_BYTES).await {
        Ok(Ok(body)) => body,
        Ok(Err(_)) => return Err(ApiError::InvalidRequest("the request body could not be read")),
        Err(_) => return Err(ApiError::PayloadTooLarge),
    };
    let request = match kind {
        BodyKind::Json => parse_json(&body)?,
        BodyKind::Form => parse_form(&body)?,
    };

    let Some(mut user) = state.users.find_by_email(&request.username).await? else {
        // Same cost as a wrong argon2id password, same answer.
        state.passwords.verify_unknown_user(request.password).await?;
        return Err(ApiError::InvalidGrant);
    };
    match state.passwords.verify(request.password, std::mem::take(&mut user.password_hash)).await? {
        Outcome::Match => {}
        Outcome::Mismatch => return Err(ApiError::InvalidGrant),
        Outcome::Unusable(reason) => {
            state.data_errors.report(user.id, reason);
            // Cost what any other refused login costs, so the answer's timing
            // does not single out accounts with broken data.
            state.passwords.pad_unusable().await?;
            return Err(ApiError::InvalidGrant);
        }
    }

    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_err(|_| ApiError::Internal)?.as_secs();
    // Two RSA signatures are ~0.5 ms of CPU. On the worker they would hold up
    // every other task of that worker, among them tasks that hold one of the
    // pool's connections until they are polled again: at 256 connections the
    // pool's waiters piled up and cores went idle (README, "Signing off the
    // workers"). On the blocking pool the worker stays free for I/O.
    let signing_state = state.clone();
    let (pair, signing_time) = web::block(move || {
        let subject = Subject { id: user.id, username: &user.username, name: &user.name, email: &user.email };
        let started = Instant::now();
        (signing_state.signer.issue(&subject, now), started.elapsed())
    })
    .await
    .map_err(|e| {
        tracing::error!("signing task failed: {e}");
        ApiError::Internal
    })?;
    let pair = pair.map_err(|e| {
        tracing::error!("signing failed: {e}");
        ApiError::Internal
    })?;
    state.metrics.token_signed(signing_time);
    let body = serde_json::to_vec(&pair).map_err(|_| ApiError::Internal)?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/json")))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .insert_header((header::PRAGMA, HeaderValue::from_static("no-cache")))
        .body(body))
}

async fn jwks(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/json")))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300")))
        .body(state.jwks.clone())
}

/// Liveness: the process serves. Never touches the database.
async fn live() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/json")))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .body(&br#"{"status":"up"}"#[..])
}

/// The Prometheus text, pool gauges read at the scrape.
async fn metrics_text(state: web::Data<AppState>) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static(metrics::CONTENT_TYPE)))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .body(state.metrics.render(state.users.pool_status()))
}

/// Readiness: `SELECT 1` through the pool.
async fn health(state: web::Data<AppState>) -> HttpResponse {
    let (mut response, body) = if state.users.is_healthy().await {
        (HttpResponse::Ok(), &br#"{"status":"up"}"#[..])
    } else {
        (HttpResponse::ServiceUnavailable(), &br#"{"status":"down"}"#[..])
    };
    response
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/json")))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .body(body)
}

/// The media type, case-insensitive, parameters such as `charset` allowed.
fn body_kind(req: &HttpRequest) -> Result<BodyKind, ApiError> {
    let value =
        req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).ok_or(ApiError::UnsupportedMediaType)?;
    let media_type = value.split(';').next().unwrap_or("").trim();
    if media_type.eq_ignore_ascii_case("application/json") {
        Ok(BodyKind::Json)
    } else if media_type.eq_ignore_ascii_case("application/x-www-form-urlencoded") {
        Ok(BodyKind::Form)
    } else {
        Err(ApiError::UnsupportedMediaType)
    }
}

/// A JSON body: one object with string `username` and `password`, and an
/// optional string `grant_type` that must be `password`. Other members are ignored.
pub fn parse_json(body: &[u8]) -> Result<TokenRequest, ApiError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|_| ApiError::InvalidRequest("the body is not valid JSON"))?;
    let Value::Object(mut object) = value else {
        return Err(ApiError::InvalidRequest("the body must be a JSON object"));
    };
    match object.get("grant_type") {
        None => {}
        Some(Value::String(grant_type)) if grant_type == "password" => {}
        Some(Value::String(_)) => return Err(ApiError::UnsupportedGrantType),
        Some(_) => return Err(ApiError::InvalidRequest("grant_type must be a string")),
    }
    let mut take = |name: &str, problem: &'static str| match object.remove(name) {
        Some(Value::String(s)) => Ok(s),
        _ => Err(ApiError::InvalidRequest(problem)),
    };
    let username = take("username", "username is required and must be a string")?;
    let password = take("password", "password is required and must be a string")?;
    validate(username, password)
}

/// A form body (RFC 6749 §4.3): `grant_type`, `username` and `password`
/// required, each at most once (§3.2); other parameters are ignored.
/// Decoding is strict: percent-escapes that decode to invalid UTF-8 are a 400,
/// not silently replaced.
pub fn parse_form(body: &[u8]) -> Result<TokenRequest, ApiError> {
    let mut grant_type: Option<String> = None;
    let mut username: Option<String> = None;
    let mut password: Option<String> = None;
    for pair in body.split(|b| *b == b'&').filter(|p| !p.is_empty()) {
        let (raw_name, raw_value) = match pair.iter().position(|b| *b == b'=') {
            Some(i) => (&pair[..i], &pair[i + 1..]),
            None => (pair, &b""[..]),
        };
        let slot = match form_decode(raw_name)?.as_ref() {
            "grant_type" => &mut grant_type,
            "username" => &mut username,
            "password" => &mut password,
            _ => continue,
        };
        if slot.is_some() {
            return Err(ApiError::InvalidRequest("grant_type, username and password may each be given only once"));
        }
        *slot = Some(form_decode(raw_value)?.into_owned());
    }
    match grant_type.as_deref() {
        None | Some("") => return Err(ApiError::InvalidRequest("grant_type is required")),
        Some("password") => {}
        Some(_) => return Err(ApiError::UnsupportedGrantType),
    }
    let username = username.ok_or(ApiError::InvalidRequest("username is required"))?;
    let password = password.ok_or(ApiError::InvalidRequest("password is required"))?;
    validate(username, password)
}

fn form_decode(raw: &[u8]) -> Result<Cow<'_, str>, ApiError> {
    let invalid = || ApiError::InvalidRequest("the form body is not valid UTF-8");
    if raw.contains(&b'+') {
        let spaced: Vec<u8> = raw.iter().map(|b| if *b == b'+' { b' ' } else { *b }).collect();
        let decoded: Vec<u8> = percent_decode(&spaced).collect();
        return String::from_utf8(decoded).map(Cow::Owned).map_err(|_| invalid());
    }
    match percent_decode(raw).into() {
        Cow::Borrowed(bytes) => std::str::from_utf8(bytes).map(Cow::Borrowed).map_err(|_| invalid()),
        Cow::Owned(bytes) => String::from_utf8(bytes).map(Cow::Owned).map_err(|_| invalid()),
    }
}

fn validate(username: String, password: String) -> Result<TokenRequest, ApiError> {
    let chars = username.chars().count();
    if chars == 0 {
        return Err(ApiError::InvalidRequest("username must not be empty"));
    }
    if chars > MAX_USERNAME_CHARS {
        return Err(ApiError::InvalidRequest("username is longer than 254 characters"));
    }
    // PostgreSQL text cannot hold U+0000; the query would fail as a server error.
    if username.contains('\0') {
        return Err(ApiError::InvalidRequest("username must not contain U+0000"));
    }
    if password.is_empty() {
        return Err(ApiError::InvalidRequest("password must not be empty"));
    }
    if password.len() > MAX_PASSWORD_BYTES {
        return Err(ApiError::InvalidRequest("password is longer than 1024 bytes"));
    }
    Ok(TokenRequest { username, password })
}
