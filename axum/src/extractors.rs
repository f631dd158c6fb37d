//! The extractors a handler takes, each rejecting with `HttpError`, so a
//! handler answers the contract's bytes for every refusal:
//!
//! - `RequestBody`: the media type first (415), then the body within the
//!   router's `DefaultBodyLimit` of `MAX_BODY_BYTES` (413), then `Parsed`
//!   runs the core's parse and field rules (400) — the contract's order of
//!   checks.
//! - `ClientIp`: the client address as the core's `ClientAddress` resolves
//!   it; the peer comes from `ConnectInfo<SocketAddr>` (the server is made
//!   with `into_make_service_with_connect_info`).

use std::net::{IpAddr, SocketAddr};

use axum::body::Bytes;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use simple_auth_core::api_error::ApiError;
use simple_auth_core::client_address::{UNREADABLE, X_FORWARDED_FOR};
use simple_auth_core::token_request::{BodyKind, RevokeRequest, TokenRequest, announced_too_large};

use crate::SharedState;
use crate::http_error::HttpError;

/// A header's value if it is visible ASCII.
fn text(headers: &HeaderMap, name: impl axum::http::header::AsHeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A request body of one of the two encodings, read whole: 415 for another
/// media type, then 413 past `MAX_BODY_BYTES` — at once when `Content-Length`
/// announces more, else when a chunked body grows past the router's
/// `DefaultBodyLimit` — and 400 for a body that cannot be read.
pub struct RequestBody {
    pub kind: BodyKind,
    pub bytes: Bytes,
}

impl std::fmt::Debug for RequestBody {
    // The body holds a password or a token: only its kind and length are printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RequestBody {{ kind: {:?}, {} bytes }}", self.kind, self.bytes.len())
    }
}

impl<S: Send + Sync> FromRequest<S> for RequestBody {
    type Rejection = HttpError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let kind = BodyKind::of(text(req.headers(), header::CONTENT_TYPE))?;
        if announced_too_large(text(req.headers(), header::CONTENT_LENGTH)) {
            return Err(ApiError::PayloadTooLarge.into());
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| match rejection.status() {
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge,
            _ => ApiError::InvalidRequest("the request body could not be read"),
        })?;
        Ok(RequestBody { kind, bytes })
    }
}

/// A `POST /token` or `/revoke` body, read by `RequestBody` and parsed by the core.
#[derive(Debug)]
pub struct Parsed<T>(pub T);

impl<S: Send + Sync> FromRequest<S> for Parsed<TokenRequest> {
    type Rejection = HttpError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let RequestBody { kind, bytes } = RequestBody::from_request(req, state).await?;
        Ok(Parsed(TokenRequest::parse(kind, &bytes)?))
    }
}

impl<S: Send + Sync> FromRequest<S> for Parsed<RevokeRequest> {
    type Rejection = HttpError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let RequestBody { kind, bytes } = RequestBody::from_request(req, state).await?;
        Ok(Parsed(RevokeRequest::parse(kind, &bytes)?))
    }
}

/// The request's client address. Never rejects: an unknown address is
/// `ClientIp(None)` (and not limited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientIp(pub Option<IpAddr>);

impl FromRequestParts<SharedState> for ClientIp {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &SharedState) -> Result<Self, Self::Rejection> {
        let peer = parts.extensions.get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(peer)| peer.ip());
        let headers = &parts.headers;
        Ok(ClientIp(
            state
                .client_address
                .resolve(peer, || headers.get_all(X_FORWARDED_FOR).iter().map(|v| v.to_str().unwrap_or(UNREADABLE))),
        ))
    }
}
