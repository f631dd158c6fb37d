//! `HttpError`: the core's `ApiError` as an actix response — the contract's
//! status, headers and JSON body (RFC 6749 §5.2), through `ResponseError`.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use simple_auth_core::api_error::ApiError;

/// An `ApiError` on its way out as a response.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct HttpError(pub ApiError);

impl From<ApiError> for HttpError {
    fn from(err: ApiError) -> Self {
        HttpError(err)
    }
}

impl ResponseError for HttpError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.0.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = HttpResponse::build(self.status_code());
        response
            .insert_header((header::CONTENT_TYPE, HeaderValue::from_static("application/json")))
            .insert_header((header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
            .insert_header((header::PRAGMA, HeaderValue::from_static("no-cache")));
        if let Some(allow) = self.0.allow() {
            response.insert_header((header::ALLOW, HeaderValue::from_static(allow)));
        }
        if let Some(seconds) = self.0.retry_after() {
            response.insert_header((header::RETRY_AFTER, HeaderValue::from(seconds)));
        }
        response.body(self.0.body())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::body::MessageBody;
    use simple_auth_core::api_error::{ALLOW_POST, Lock};

    /// Every `ApiError` becomes the status, headers and body the core gives it.
    #[test]
    fn the_response_is_the_cores_answer() {
        for err in [
            ApiError::InvalidRefreshToken,
            ApiError::TooManyFailures { lock: Lock::Username, retry_after: 0 },
            ApiError::TooManyFailures { lock: Lock::Address, retry_after: 300 },
            ApiError::MethodNotAllowed { allow: ALLOW_POST },
            ApiError::DatabaseUnavailable,
            ApiError::NotFound,
            ApiError::PayloadTooLarge,
        ] {
            let expected_retry_after = err.retry_after().map(|s| s.to_string());
            let (status, allow, body) = (err.status(), err.allow(), err.body());
            let response = HttpError(err).error_response();
            assert_eq!(response.status().as_u16(), status);
            let headers = response.headers();
            let get = |name| headers.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
            assert_eq!(
                (get(header::CONTENT_TYPE), get(header::CACHE_CONTROL), get(header::PRAGMA)),
                (Some("application/json"), Some("no-store"), Some("no-cache"))
            );
            assert_eq!((get(header::ALLOW), get(header::RETRY_AFTER)), (allow, expected_retry_after.as_deref()));
            assert_eq!(response.into_body().try_into_bytes().ok().as_deref(), Some(&body[..]));
        }
    }
}
