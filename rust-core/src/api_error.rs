//! `ApiError`: every failure the service answers with, and the contract's
//! RFC 6749 §5.2 answer of each as plain data — the status code, the
//! `error` code, the exact JSON body and the two extra headers (`Allow`,
//! `Retry-After`). Each front end turns it into its framework's response (a
//! newtype there); nothing here knows a web framework.

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

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_description: Option<&'a str>,
}

impl ApiError {
    /// The HTTP status of the contract's answer.
    pub fn status(&self) -> u16 {
        match self {
            ApiError::InvalidRequest(_)
            | ApiError::UnsupportedGrantType
            | ApiError::InvalidGrant
            | ApiError::InvalidRefreshToken => 400,
            ApiError::TooManyFailures { .. } => 429,
            ApiError::PayloadTooLarge => 413,
            ApiError::UnsupportedMediaType => 415,
            ApiError::MethodNotAllowed { .. } => 405,
            ApiError::NotFound => 404,
            ApiError::DatabaseUnavailable | ApiError::Overloaded => 503,
            ApiError::Internal => 500,
        }
    }

    /// The OAuth `error` member.
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

    /// The JSON body. Every answer also carries `Content-Type:
    /// application/json`, `Cache-Control: no-store` and `Pragma: no-cache`.
    pub fn body(&self) -> Vec<u8> {
        let description = self.to_string();
        let body = ErrorBody {
            error: self.code(),
            // The contract's 404 body is exactly {"error":"not_found"}.
            error_description: (!matches!(self, ApiError::NotFound)).then_some(description.as_str()),
        };
        serde_json::to_vec(&body).unwrap_or_else(|_| br#"{"error":"server_error"}"#.to_vec())
    }

    /// The `Allow` header of a 405.
    pub fn allow(&self) -> Option<&'static str> {
        match self {
            ApiError::MethodNotAllowed { allow } => Some(allow),
            _ => None,
        }
    }

    /// The `Retry-After` header, in seconds: 1 on a 503, the lock's
    /// remaining seconds (at least 1) on a 429.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            ApiError::DatabaseUnavailable | ApiError::Overloaded => Some(1),
            ApiError::TooManyFailures { retry_after, .. } => Some((*retry_after).max(1)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_grant_has_the_exact_bytes() {
        let err = ApiError::InvalidGrant;
        assert_eq!(err.status(), 400);
        assert_eq!(err.body(), br#"{"error":"invalid_grant","error_description":"invalid username or password"}"#);
        assert_eq!((err.allow(), err.retry_after()), (None, None));
    }

    #[test]
    fn a_refused_refresh_has_the_exact_bytes() {
        let err = ApiError::InvalidRefreshToken;
        assert_eq!(err.status(), 400);
        assert_eq!(err.body(), br#"{"error":"invalid_grant","error_description":"invalid refresh token"}"#);
        assert_eq!(err.retry_after(), None);
    }

    #[test]
    fn both_locks_are_429_with_retry_after_and_the_same_bytes() {
        let expected =
            br#"{"error":"temporarily_unavailable","error_description":"too many failed logins; try again later"}"#;
        for (lock, retry_after, header_value) in
            [(Lock::Username, 17, 17), (Lock::Address, 300, 300), (Lock::Address, 0, 1)]
        {
            let err = ApiError::TooManyFailures { lock, retry_after };
            assert_eq!(err.status(), 429);
            assert_eq!(err.body(), expected);
            assert_eq!(err.retry_after(), Some(header_value));
        }
    }

    #[test]
    fn overload_is_the_databases_503() {
        let (overloaded, database) = (ApiError::Overloaded, ApiError::DatabaseUnavailable);
        assert_eq!((overloaded.status(), database.status()), (503, 503));
        assert_eq!((overloaded.retry_after(), database.retry_after()), (Some(1), Some(1)));
        assert_eq!(overloaded.body(), database.body());
    }

    #[test]
    fn not_found_has_no_description() {
        assert_eq!(ApiError::NotFound.status(), 404);
        assert_eq!(ApiError::NotFound.body(), br#"{"error":"not_found"}"#);
    }

    #[test]
    fn statuses_codes_and_extra_headers() {
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
            let is_503 = status == 503;
            let allow = match err {
                ApiError::MethodNotAllowed { allow } => Some(allow),
                _ => None,
            };
            assert_eq!(err.status(), status);
            assert_eq!(err.code(), code);
            let json: serde_json::Value = serde_json::from_slice(&err.body()).expect("json");
            assert_eq!(json["error"], code);
            assert!(json["error_description"].is_string());
            assert_eq!(err.retry_after().is_some(), is_503);
            assert_eq!(err.allow(), allow);
        }
    }
}
