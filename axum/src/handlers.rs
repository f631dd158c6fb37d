//! The handlers: POST /token, POST /revoke, GET /.well-known/jwks.json,
//! GET /.well-known/openid-configuration, GET /health, GET /health/live,
//! GET /metrics, and the middleware that counts and times every
//! `POST /token`. The routes, fallbacks and layers are in `routes`.

use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::http::header::{self, HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use simple_auth_core::metrics;
use simple_auth_core::token_request::{RevokeRequest, TokenRequest};

use crate::SharedState;
use crate::extractors::{ClientIp, Parsed};
use crate::http_error::{ErrorCode, HttpError};

/// `Content-Type: application/json`.
fn json() -> [(HeaderName, HeaderValue); 1] {
    [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))]
}

/// `Cache-Control` of an answer.
fn cache(directives: &'static str) -> [(HeaderName, HeaderValue); 1] {
    [(header::CACHE_CONTROL, HeaderValue::from_static(directives))]
}

/// An answer that carries (or ends) credentials: `Cache-Control: no-store`
/// and `Pragma: no-cache` (RFC 6749 §5.1).
fn no_store() -> [(HeaderName, HeaderValue); 2] {
    [
        (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        (header::PRAGMA, HeaderValue::from_static("no-cache")),
    ]
}

/// `POST /token`, either grant. The extractors have checked, in the
/// contract's order, the media type (415), the size (413) and the body's
/// rules (400); the grant does the rest (limits, database, signing).
pub async fn token(
    State(state): State<SharedState>,
    ClientIp(address): ClientIp,
    Parsed(request): Parsed<TokenRequest>,
) -> Result<Response, HttpError> {
    let body = state.tokens.issue(request, address).await?.body()?;
    Ok((json(), no_store(), body).into_response())
}

/// Counts and times every answer of `POST /token` (a `route_layer` on the
/// POST route only: a 405 is not a token request): the status and the OAuth
/// error code `HttpError` left in the response's extensions, `none` for a 200.
/// The extractors run inside it, so a 415, 413 or 400 is counted too.
pub async fn count_token_request(State(state): State<SharedState>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let response = next.run(request).await;
    let error = response.extensions().get::<ErrorCode>().map_or("none", |ErrorCode(code)| code);
    state.metrics.token_request(response.status().as_u16(), error, started.elapsed());
    response
}

/// `POST /revoke` (RFC 7009): 200 with an empty body whatever the token was;
/// the same 415 / 413 / 400 as `/token` before, 503 when the database cannot
/// be asked.
pub async fn revoke(
    State(state): State<SharedState>,
    Parsed(request): Parsed<RevokeRequest>,
) -> Result<Response, HttpError> {
    state.tokens.revoke(request).await?;
    Ok(no_store().into_response())
}

/// The JWK set of the keys in service (serialised when they were loaded).
pub async fn jwks(State(state): State<SharedState>) -> Response {
    public_json(state.keys.current().jwks.clone())
}

/// The OpenID Connect discovery document of the keys in service.
pub async fn discovery(State(state): State<SharedState>) -> Response {
    public_json(state.keys.current().discovery.clone())
}

fn public_json(body: bytes::Bytes) -> Response {
    (json(), cache("public, max-age=300"), body).into_response()
}

/// Liveness: the process serves. Never touches the database.
pub async fn live() -> Response {
    status_json(StatusCode::OK, r#"{"status":"up"}"#)
}

/// Readiness: `SELECT 1` through the pool, within a second.
pub async fn health(State(state): State<SharedState>) -> Response {
    if state.health.is_up().await {
        status_json(StatusCode::OK, r#"{"status":"up"}"#)
    } else {
        status_json(StatusCode::SERVICE_UNAVAILABLE, r#"{"status":"down"}"#)
    }
}

fn status_json(status: StatusCode, body: &'static str) -> Response {
    (status, json(), cache("no-store"), body).into_response()
}

/// The Prometheus text, the pool gauges read at the scrape.
pub async fn metrics_text(State(state): State<SharedState>) -> Response {
    let content_type = [(header::CONTENT_TYPE, HeaderValue::from_static(metrics::CONTENT_TYPE))];
    (content_type, cache("no-store"), state.metrics.render(state.health.pool_status())).into_response()
}
