//! `HttpError`: the core's `ApiError` as an axum response — the contract's
//! status, headers and JSON body (RFC 6749 §5.2) — and the fallbacks that
//! answer 404 and 405. Handlers, extractors and the fallbacks all return it.

use axum::http::header::{self, HeaderValue};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use simple_auth_core::api_error::{ALLOW_GET, ALLOW_POST, ApiError};

/// An `ApiError` on its way out as a response.
#[derive(Debug)]
pub struct HttpError(pub ApiError);

impl From<ApiError> for HttpError {
    fn from(err: ApiError) -> Self {
        HttpError(err)
    }
}

/// The OAuth error code of an error response, left in the response's
/// extensions by `HttpError::into_response` so that middleware (the
/// `POST /token` metrics) can count it without parsing the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCode(pub &'static str);

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let HttpError(err) = self;
        let status = StatusCode::from_u16(err.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut headers = HeaderMap::with_capacity(5);
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
        if let Some(allow) = err.allow() {
            headers.insert(header::ALLOW, HeaderValue::from_static(allow));
        }
        if let Some(seconds) = err.retry_after() {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        let mut response = (status, headers, err.body()).into_response();
        response.extensions_mut().insert(ErrorCode(err.code()));
        response
    }
}

/// The 404 of every path the router does not know (`Router::fallback`).
pub async fn not_found() -> HttpError {
    HttpError(ApiError::NotFound)
}

/// The 405 of `/token` and `/revoke` for any method but POST.
pub async fn post_only() -> HttpError {
    HttpError(ApiError::MethodNotAllowed { allow: ALLOW_POST })
}

/// The 405 of the read-only endpoints for any method but GET and HEAD.
pub async fn get_only() -> HttpError {
    HttpError(ApiError::MethodNotAllowed { allow: ALLOW_GET })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::to_bytes;
    use simple_auth_core::api_error::Lock;

    /// Every `ApiError` becomes the status, headers and body the core gives
    /// it, with the error code in the extensions.
    #[tokio::test]
    async fn the_response_is_the_cores_answer() {
        let cases = [
            ApiError::InvalidGrant,
            ApiError::TooManyFailures { lock: Lock::Address, retry_after: 0 },
            ApiError::TooManyFailures { lock: Lock::Username, retry_after: 17 },
            ApiError::MethodNotAllowed { allow: ALLOW_GET },
            ApiError::Overloaded,
            ApiError::NotFound,
            ApiError::Internal,
        ];
        for err in cases {
            let (status, code, body) = (err.status(), err.code(), err.body());
            let (allow, retry_after) = (err.allow(), err.retry_after().map(|s| s.to_string()));
            let response = HttpError(err).into_response();
            assert_eq!(response.status().as_u16(), status);
            let headers = response.headers().clone();
            let value = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
            assert_eq!(value(header::CONTENT_TYPE).as_deref(), Some("application/json"));
            assert_eq!(value(header::CACHE_CONTROL).as_deref(), Some("no-store"));
            assert_eq!(value(header::PRAGMA).as_deref(), Some("no-cache"));
            assert_eq!(value(header::ALLOW).as_deref(), allow);
            assert_eq!(value(header::RETRY_AFTER), retry_after);
            assert_eq!(response.extensions().get::<ErrorCode>(), Some(&ErrorCode(code)));
            assert_eq!(to_bytes(response.into_body(), usize::MAX).await.expect("body"), body);
        }
    }
}
