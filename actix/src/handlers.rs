//! The HTTP surface: POST /token, POST /revoke, GET /.well-known/jwks.json,
//! GET /.well-known/openid-configuration, GET /health, GET /health/live,
//! GET /metrics, and the contract's answers for wrong methods and unknown
//! paths (any method token actix parses, standard or not).

use std::time::Instant;

use actix_web::http::header::{self, HeaderValue};
use actix_web::web;
use actix_web::{FromRequest, Handler, HttpRequest, HttpResponse, Resource, Responder, guard};
use serde::Serialize;

use crate::app_state::AppState;
use crate::errors::ApiError;
use crate::metrics;
use crate::refresh_token::RefreshToken;
use crate::token_request::{RevokeRequest, TokenRequest};
use crate::token_service::IssuedTokens;
use crate::token_signer::TokenPair;

/// Largest accepted request body, in bytes (exactly this much is accepted).
pub const MAX_BODY_BYTES: usize = 8192;

/// Registers every route, and the JSON 404/405 answers for everything else.
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/token").route(web::post().to(token)).default_service(web::to(post_only)))
        .service(web::resource("/revoke").route(web::post().to(revoke)).default_service(web::to(post_only)))
        .service(read_only("/.well-known/jwks.json", jwks))
        .service(read_only("/.well-known/openid-configuration", discovery))
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
/// parse and validate (400), then the grant (limits, database, signing).
async fn issue_token(req: HttpRequest, payload: web::Payload, state: &AppState) -> Result<HttpResponse, ApiError> {
    let (kind, body) = read_body(&req, payload).await?;
    let request = match kind {
        BodyKind::Json => TokenRequest::from_json(&body)?,
        BodyKind::Form => TokenRequest::from_form(&body)?,
    };
    let address = state.client_address.of(&req);
    let issued = state.tokens.issue(request, address).await?;
    let body = serde_json::to_vec(&TokenResponse::from(&issued)).map_err(|_| ApiError::Internal)?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/json")))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .insert_header((header::PRAGMA, HeaderValue::from_static("no-cache")))
        .body(body))
}

/// `POST /revoke` (RFC 7009): 200 with an empty body whatever the token was;
/// the same 415 / 413 / 400 as `/token` before, 503 when the database cannot
/// be asked.
async fn revoke(req: HttpRequest, payload: web::Payload, state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let (kind, body) = read_body(&req, payload).await?;
    let request = match kind {
        BodyKind::Json => RevokeRequest::from_json(&body)?,
        BodyKind::Form => RevokeRequest::from_form(&body)?,
    };
    state.tokens.revoke(request).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .insert_header((header::PRAGMA, HeaderValue::from_static("no-cache")))
        .finish())
}

/// The media type (415), then the body read by hand with the 8192-byte
/// limit (413), announced or chunked.
async fn read_body(req: &HttpRequest, payload: web::Payload) -> Result<(BodyKind, web::Bytes), ApiError> {
    let kind = body_kind(req)?;
    let announced = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if announced.is_some_and(|len| len > MAX_BODY_BYTES as u64) {
        return Err(ApiError::PayloadTooLarge);
    }
    // Read by hand with a limit, so a chunked body is held to it as well.
    match payload.to_bytes_limited(MAX_BODY_BYTES).await {
        Ok(Ok(body)) => Ok((kind, body)),
        Ok(Err(_)) => Err(ApiError::InvalidRequest("the request body could not be read")),
        Err(_) => Err(ApiError::PayloadTooLarge),
    }
}

/// The success body of `POST /token`: exactly the contract's five members.
#[derive(Debug, Serialize)]
pub struct TokenResponse<'a> {
    pub access_token: &'a str,
    pub id_token: &'a str,
    pub token_type: &'static str,
    pub expires_in: u64,
    pub refresh_token: &'a str,
}

impl<'a> TokenResponse<'a> {
    pub fn new(pair: &'a TokenPair, refresh_token: &'a RefreshToken) -> Self {
        TokenResponse {
            access_token: &pair.access_token,
            id_token: &pair.id_token,
            token_type: "Bearer",
            expires_in: pair.expires_in,
            refresh_token: refresh_token.as_str(),
        }
    }
}

impl<'a> From<&'a IssuedTokens> for TokenResponse<'a> {
    fn from(issued: &'a IssuedTokens) -> Self {
        TokenResponse::new(&issued.pair, &issued.refresh_token)
    }
}

/// The JWK set of the keys in service (built when they were loaded).
async fn jwks(state: web::Data<AppState>) -> HttpResponse {
    public_json(state.keys.current().jwks.clone())
}

/// The OpenID Connect discovery document of the keys in service.
async fn discovery(state: web::Data<AppState>) -> HttpResponse {
    public_json(state.keys.current().discovery.clone())
}

fn public_json(body: web::Bytes) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/json")))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300")))
        .body(body)
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
        .body(state.metrics.render(state.health.pool_status()))
}

/// Readiness: `SELECT 1` through the pool.
async fn health(state: web::Data<AppState>) -> HttpResponse {
    let (mut response, body) = if state.health.is_up().await {
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
