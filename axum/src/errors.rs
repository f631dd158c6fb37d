//! `ApiError`: every failure the service answers with, mapped once to the
//! contract's RFC 6749 §5.2 JSON (status, headers, body) by its
//! `IntoResponse`. Handlers, extractors and the fallbacks all return it.

use axum::http::header::{self, HeaderValue};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// The exact `invalid_grant` description: unknown user, wrong password and
/// unusable stored hash must give the same bytes.
pub const INVALID_GRANT_DESCRIPTION: &str = "invalid username or password";
/// The exact description of every refused refresh (contract §7).
pub const INVALID_REFRESH_TOKEN_DESCRIPTION: &str = "invalid refresh token";
/// Both 429s (username and address lock) give these bytes' description.
pub const TOO_MANY_FAILURES_DESCRIPTION: &str = "too many failed logins; try again later";
/// The database's 503 and the overload 503 give the same bytes.
pub const UNAVAILABLE_DESCRIPTION: &str = "temporarily unavailable, try again";

/// The `Allow` value of `/token` and `/revoke`.
pub const ALLOW_POST: &str = "POST";
/// The `Allow` value of the read-only endpoints.
pub const ALLOW_GET: &str = "GET, HEAD";

/// Which limit of contract §8 answered 429.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    Username,
    Address,
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    InvalidRequest(&'static str),
    #[error("grant_type must be \"password\" or \"refresh_token\"")]
    UnsupportedGrantType,
    #[error("{}", INVALID_GRANT_DESCRIPTION)]
    InvalidGrant,
    #[error("{}", INVALID_REFRESH_TOKEN_DESCRIPTION)]
    InvalidRefreshToken,
    /// 429 with `Retry-After: retry_after` (seconds, at least 1).
    #[error("{}", TOO_MANY_FAILURES_DESCRIPTION)]
    TooManyFailures { lock: Lock, retry_after: u64 },
    /// More argon2id checks than MAX_PASSWORD_CHECKS: 503 at once.
    #[error("{}", UNAVAILABLE_DESCRIPTION)]
    Overloaded,
    #[error("request body larger than 8192 bytes")]
    PayloadTooLarge,
    #[error("Content-Type must be application/json or application/x-www-form-urlencoded")]
    UnsupportedMediaType,
    #[error("method not allowed")]
    MethodNotAllowed { allow: &'static str },
    #[error("not found")]
    NotFound,
    #[error("{}", UNAVAILABLE_DESCRIPTION)]
    DatabaseUnavailable,
    #[error("internal error")]
    Internal,
}

/// The OAuth error code of an error response, left in the response's
/// extensions by `ApiError::into_response` so that middleware (the
/// `POST /token` metrics) can count it without parsing the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorCode(pub &'static str);

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_description: Option<&'a str>,
}

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::InvalidRequest(_)
            | ApiError::UnsupportedGrantType
            | ApiError::InvalidGrant
            | ApiError::InvalidRefreshToken => StatusCode::BAD_REQUEST,
            ApiError::TooManyFailures { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::NotFound => StatusCode::NOT_FOUND,
            ApiError::DatabaseUnavailable | ApiError::Overloaded => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::InvalidRequest(_)
            | ApiError::PayloadTooLarge
            | ApiError::UnsupportedMediaType
            | ApiError::MethodNotAllowed { .. } => "invalid_request",
            ApiError::UnsupportedGrantType => "unsupported_grant_type",
            ApiError::InvalidGrant | ApiError::InvalidRefreshToken => "invalid_grant",
            ApiError::NotFound => "not_found",
            ApiError::DatabaseUnavailable | ApiError::Overloaded | ApiError::TooManyFailures { .. } => {
                "temporarily_unavailable"
            }
            ApiError::Internal => "server_error",
        }
    }

    fn body(&self) -> Vec<u8> {
        let description = self.to_string();
        let body = ErrorBody {
            error: self.code(),
            // The contract's 404 body is exactly {"error":"not_found"}.
            error_description: (!matches!(self, ApiError::NotFound)).then_some(description.as_str()),
        };
        serde_json::to_vec(&body).unwrap_or_else(|_| br#"{"error":"server_error"}"#.to_vec())
    }

    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::with_capacity(5);
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        headers.insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
        match self {
            ApiError::MethodNotAllowed { allow } => {
                headers.insert(header::ALLOW, HeaderValue::from_static(allow));
            }
            ApiError::DatabaseUnavailable | ApiError::Overloaded => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            ApiError::TooManyFailures { retry_after, .. } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from((*retry_after).max(1)));
            }
            _ => {}
        }
        headers
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status(), self.headers(), self.body()).into_response();
        response.extensions_mut().insert(ErrorCode(self.code()));
        response
    }
}

/// The 404 of every path the router does not know (`Router::fallback`).
pub async fn not_found() -> ApiError {
    ApiError::NotFound
}

/// The 405 of `/token` and `/revoke` for any method but POST.
pub async fn post_only() -> ApiError {
    ApiError::MethodNotAllowed { allow: ALLOW_POST }
}

/// The 405 of the read-only endpoints for any method but GET and HEAD.
pub async fn get_only() -> ApiError {
    ApiError::MethodNotAllowed { allow: ALLOW_GET }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::to_bytes;

    async fn parts(err: ApiError) -> (u16, HeaderMap, Vec<u8>, Option<ErrorCode>) {
        let response = err.into_response();
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let code = response.extensions().get::<ErrorCode>().copied();
        let body = to_bytes(response.into_body(), usize::MAX).await.expect("body").to_vec();
        (status, headers, body, code)
    }

    fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
        headers.get(name).and_then(|v| v.to_str().ok())
    }

    #[tokio::test]
    async fn invalid_grant_has_the_exact_bytes() {
        let (status, headers, body, code) = parts(ApiError::InvalidGrant).await;
        assert_eq!(status, 400);
        assert_eq!(body, br#"{"error":"invalid_grant","error_description":"invalid username or password"}"#);
        assert_eq!(header(&headers, "content-type"), Some("application/json"));
        assert_eq!(header(&headers, "cache-control"), Some("no-store"));
        assert_eq!(code, Some(ErrorCode("invalid_grant")));
    }

    #[tokio::test]
    async fn a_refused_refresh_has_the_exact_bytes() {
        let (status, headers, body, _) = parts(ApiError::InvalidRefreshToken).await;
        assert_eq!(status, 400);
        assert_eq!(body, br#"{"error":"invalid_grant","error_description":"invalid refresh token"}"#);
        assert_eq!(header(&headers, "cache-control"), Some("no-store"));
        assert_eq!(header(&headers, "retry-after"), None);
    }

    #[tokio::test]
    async fn both_locks_are_429_with_retry_after_and_the_same_bytes() {
        let expected =
            br#"{"error":"temporarily_unavailable","error_description":"too many failed logins; try again later"}"#;
        for (lock, retry_after, header_value) in
            [(Lock::Username, 17, "17"), (Lock::Address, 300, "300"), (Lock::Address, 0, "1")]
        {
            let (status, headers, body, _) = parts(ApiError::TooManyFailures { lock, retry_after }).await;
            assert_eq!(status, 429);
            assert_eq!(body, expected);
            assert_eq!(header(&headers, "retry-after"), Some(header_value));
            assert_eq!(header(&headers, "cache-control"), Some("no-store"));
            assert_eq!(header(&headers, "content-type"), Some("application/json"));
        }
    }

    #[tokio::test]
    async fn overload_is_the_databases_503() {
        let overloaded = parts(ApiError::Overloaded).await;
        let database = parts(ApiError::DatabaseUnavailable).await;
        assert_eq!(overloaded.0, 503);
        assert_eq!(header(&overloaded.1, "retry-after"), Some("1"));
        assert_eq!(overloaded.2, database.2);
        assert_eq!(overloaded.1, database.1);
    }

    #[tokio::test]
    async fn not_found_has_no_description() {
        let (status, headers, body, _) = parts(ApiError::NotFound).await;
        assert_eq!(status, 404);
        assert_eq!(body, br#"{"error":"not_found"}"#);
        assert_eq!(header(&headers, "content-type"), Some("application/json"));
    }

    #[tokio::test]
    async fn statuses_codes_and_extra_headers() {
        let cases = [
            (ApiError::InvalidRequest("x"), 400, "invalid_request"),
            (ApiError::UnsupportedGrantType, 400, "unsupported_grant_type"),
            (ApiError::PayloadTooLarge, 413, "invalid_request"),
            (ApiError::UnsupportedMediaType, 415, "invalid_request"),
            (ApiError::MethodNotAllowed { allow: ALLOW_POST }, 405, "invalid_request"),
            (ApiError::MethodNotAllowed { allow: ALLOW_GET }, 405, "invalid_request"),
            (ApiError::DatabaseUnavailable, 503, "temporarily_unavailable"),
            (ApiError::Overloaded, 503, "temporarily_unavailable"),
            (ApiError::InvalidRefreshToken, 400, "invalid_grant"),
            (ApiError::Internal, 500, "server_error"),
        ];
        for (err, status, code) in cases {
            let is_503 = matches!(err, ApiError::DatabaseUnavailable | ApiError::Overloaded);
            let allow = match err {
                ApiError::MethodNotAllowed { allow } => Some(allow),
                _ => None,
            };
            let (s, headers, body, extension) = parts(err).await;
            assert_eq!(s, status);
            let json: serde_json::Value = serde_json::from_slice(&body).expect("json");
            assert_eq!(json["error"], code);
            assert!(json["error_description"].is_string());
            assert_eq!(header(&headers, "cache-control"), Some("no-store"));
            assert_eq!(header(&headers, "retry-after").is_some(), is_503);
            assert_eq!(header(&headers, "allow"), allow);
            assert_eq!(extension, Some(ErrorCode(code)));
        }
    }
}
