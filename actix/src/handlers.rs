//! The HTTP surface: on the public port POST /token, POST /revoke,
//! GET /.well-known/jwks.json, GET /.well-known/openid-configuration,
//! GET /health, GET /health/live, and the contract's answers for wrong
//! methods and unknown paths (any method token actix parses, standard or
//! not); on METRICS_PORT GET /metrics alone (`metrics_routes`).

use std::time::Instant;

use actix_web::http::header::{self, HeaderValue};
use actix_web::web;
use actix_web::{FromRequest, Handler, HttpRequest, HttpResponse, Resource, Responder, guard};
use simple_auth_core::api_error::{ALLOW_GET, ALLOW_POST, ApiError};
use simple_auth_core::app_state::AppState;
use simple_auth_core::client_address::{UNREADABLE, X_FORWARDED_FOR};
use simple_auth_core::metrics;
use simple_auth_core::token_request::{BodyKind, MAX_BODY_BYTES, RevokeRequest, TokenRequest, announced_too_large};

use crate::http_error::HttpError;

/// Registers every route of the public port, and the JSON 404/405 answers
/// for everything else (`/metrics` included: it tells outcomes apart, so it
/// is served on METRICS_PORT only).
pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/token").route(web::post().to(token)).default_service(web::to(post_only)))
        .service(web::resource("/revoke").route(web::post().to(revoke)).default_service(web::to(post_only)))
        .service(read_only("/.well-known/jwks.json", jwks))
        .service(read_only("/.well-known/openid-configuration", discovery))
        .service(read_only("/health", health))
        .service(read_only("/health/live", live))
        .default_service(web::to(not_found));
}

/// The metrics port (METRICS_PORT, its own `App`): `GET /metrics` (HEAD
/// answered like GET), and the JSON 404 for everything else.
pub fn metrics_routes(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/metrics")
            .route(web::route().guard(guard::Any(guard::Get()).or(guard::Head())).to(metrics_text))
            .default_service(web::to(not_found)),
    )
    .default_service(web::to(not_found));
}

async fn not_found() -> Result<HttpResponse, HttpError> {
    Err(HttpError(ApiError::NotFound))
}

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
        .default_service(web::to(|| async {
            Err::<HttpResponse, _>(HttpError(ApiError::MethodNotAllowed { allow: ALLOW_GET }))
        }))
}

async fn post_only() -> Result<HttpResponse, HttpError> {
    Err(HttpError(ApiError::MethodNotAllowed { allow: ALLOW_POST }))
}

/// A header's value if it is visible ASCII.
fn text(req: &HttpRequest, name: impl header::AsHeaderName) -> Option<&str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// `POST /token`, counted and timed whatever its answer.
async fn token(req: HttpRequest, payload: web::Payload, state: web::Data<AppState>) -> Result<HttpResponse, HttpError> {
    let started = Instant::now();
    let result = issue_token(req, payload, &state).await;
    let (status, error) = match &result {
        Ok(_) => (200, "none"),
        Err(HttpError(err)) => (err.status(), err.code()),
    };
    state.metrics.token_request(status, error, started.elapsed());
    result
}

/// Checks in the order of spec/README.md: Content-Type (415), size (413),
/// parse and validate (400), then the grant (limits, database, signing).
async fn issue_token(req: HttpRequest, payload: web::Payload, state: &AppState) -> Result<HttpResponse, HttpError> {
    let (kind, body) = read_body(&req, payload).await?;
    let request = TokenRequest::parse(kind, &body)?;
    let body = state.tokens.issue(request, client_address(&req, state)).await?.body()?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/json")))
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .insert_header((header::PRAGMA, HeaderValue::from_static("no-cache")))
        .body(body))
}

/// `POST /revoke` (RFC 7009): 200 with an empty body whatever the token was;
/// the same 415 / 413 / 400 as `/token` before, 503 when the database cannot
/// be asked.
async fn revoke(
    req: HttpRequest,
    payload: web::Payload,
    state: web::Data<AppState>,
) -> Result<HttpResponse, HttpError> {
    let (kind, body) = read_body(&req, payload).await?;
    let request = RevokeRequest::parse(kind, &body)?;
    state.tokens.revoke(request).await?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .insert_header((header::PRAGMA, HeaderValue::from_static("no-cache")))
        .finish())
}

/// The media type (415), then the body read by hand with the 8192-byte
/// limit (413), announced or chunked.
async fn read_body(req: &HttpRequest, payload: web::Payload) -> Result<(BodyKind, web::Bytes), ApiError> {
    let kind = BodyKind::of(text(req, header::CONTENT_TYPE))?;
    if announced_too_large(text(req, header::CONTENT_LENGTH)) {
        return Err(ApiError::PayloadTooLarge);
    }
    // Read by hand with a limit, so a chunked body is held to it as well.
    match payload.to_bytes_limited(MAX_BODY_BYTES).await {
        Ok(Ok(body)) => Ok((kind, body)),
        Ok(Err(_)) => Err(ApiError::InvalidRequest("the request body could not be read")),
        Err(_) => Err(ApiError::PayloadTooLarge),
    }
}

/// The client address of contract §8 (`ClientAddress`). actix's
/// `ConnectionInfo::realip_remote_addr` is not used: it believes `Forwarded`
/// and the first `X-Forwarded-For` entry whatever the peer, which a client
/// can write.
fn client_address(req: &HttpRequest, state: &AppState) -> Option<std::net::IpAddr> {
    state.client_address.resolve(req.peer_addr().map(|peer| peer.ip()), || {
        req.headers().get_all(X_FORWARDED_FOR).map(|v| v.to_str().unwrap_or(UNREADABLE))
    })
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
