//! The `Router`s: the public port's (every route of the contract but
//! `/metrics`, the contract's answers for wrong methods and unknown paths,
//! and the layers around them), and METRICS_PORT's (`/metrics` alone).
//!
//! - Each path has one `MethodRouter` whose `fallback` answers any method it
//!   does not route — standard or not (`FOO`, `QUERY`) — with the contract's
//!   405 JSON and its own `Allow`, which axum then leaves alone.
//! - `get(..)` routes answer HEAD with the GET handler's status and headers
//!   and no body (axum strips it after setting `Content-Length`); so do the
//!   fallbacks.
//! - Any other path is the router's fallback: 404 `{"error":"not_found"}`.
//!   axum matches paths exactly: `/token/` is another path, so a 404.
//! - `DefaultBodyLimit::max(8192)` is the limit the body extractors
//!   (`extractors::RequestBody`) read within; `CatchPanicLayer` turns a
//!   panic in a handler into the contract's 500 `server_error` instead of a
//!   dropped connection; `unread_body::read_unread_body`, outermost, reads
//!   what a handler left of a request's body before the answer goes out, so
//!   that a refusal reaches a client still sending and the connection stays
//!   open.

use std::any::Any;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;

use simple_auth_core::api_error::ApiError;
use simple_auth_core::token_request::MAX_BODY_BYTES;

use crate::SharedState;
use crate::handlers;
use crate::http_error::{self as errors, HttpError};
use crate::unread_body;

pub fn router(state: SharedState) -> Router {
    let token = post(handlers::token)
        .route_layer(middleware::from_fn_with_state(state.clone(), handlers::count_token_request))
        .fallback(errors::post_only);
    Router::new()
        .route("/token", token)
        .route("/revoke", post(handlers::revoke).fallback(errors::post_only))
        .route("/.well-known/jwks.json", get(handlers::jwks).fallback(errors::get_only))
        .route("/.well-known/openid-configuration", get(handlers::discovery).fallback(errors::get_only))
        .route("/health", get(handlers::health).fallback(errors::get_only))
        .route("/health/live", get(handlers::live).fallback(errors::get_only))
        .fallback(errors::not_found)
        .layer(
            ServiceBuilder::new()
                .layer(CatchPanicLayer::custom(panic_response))
                .layer(DefaultBodyLimit::max(MAX_BODY_BYTES)),
        )
        .layer(middleware::from_fn(unread_body::read_unread_body))
        .with_state(state)
}

/// The metrics port (METRICS_PORT): `GET /metrics` (HEAD answered like GET),
/// the JSON 404 for everything else, other methods on `/metrics` included.
pub fn metrics_router(state: SharedState) -> Router {
    Router::new()
        .route("/metrics", get(handlers::metrics_text).fallback(errors::not_found))
        .fallback(errors::not_found)
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(middleware::from_fn(unread_body::read_unread_body))
        .with_state(state)
}

/// What a request whose handler panicked gets (the panic itself is on
/// stderr through the default hook).
fn panic_response(_panic: Box<dyn Any + Send + 'static>) -> Response {
    tracing::error!("a request handler panicked; answered 500");
    HttpError(ApiError::Internal).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::{Body, to_bytes};
    use axum::http::{Request, StatusCode, header};
    use tower::ServiceExt as _;

    #[tokio::test]
    async fn a_panicking_handler_is_the_contracts_500() {
        async fn boom() -> &'static str {
            panic!("a bug")
        }
        let app = Router::new().route("/boom", get(boom)).layer(CatchPanicLayer::custom(panic_response));
        let request = Request::builder().uri("/boom").body(Body::empty()).expect("request");
        let response = app.oneshot(request).await.expect("infallible");
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()),
            Some("application/json")
        );
        assert_eq!(response.headers().get(header::CACHE_CONTROL).and_then(|v| v.to_str().ok()), Some("no-store"));
        let body = to_bytes(response.into_body(), usize::MAX).await.expect("body");
        assert_eq!(&body[..], br#"{"error":"server_error","error_description":"internal error"}"#);
    }
}
