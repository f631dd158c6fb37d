//! `read_unread_body`: the middleware that reads what a handler left of its
//! request's body, before the answer goes out.
//!
//! hyper closes a connection whose request body was not read to its end (it
//! reads only what has already arrived), and a socket closed while the peer
//! is still sending is reset. The client — or a proxy on the way, Docker's
//! port forwarding, a load balancer — can then lose the answer it had not
//! read yet, and a client that reuses the connection finds it gone. Every
//! refusal that does not need the body is such a case (404, 405, 415, 413 by
//! `Content-Length` or past the limit), and so is a GET sent with a body.
//! Read to its end, the body leaves the connection open and the answer
//! arrives. A body of more than `DRAIN_BYTES` past what the handler read, or
//! slower than `DRAIN_TIME`, is still cut off, and its answer says
//! `Connection: close`: hyper closes that connection after the answer, and a
//! client that was not told so would send its next request on it (through a
//! proxy, which passes the close on late, that request is lost). A request
//! with `Expect: 100-continue` is left alone (its client sends the body only
//! when asked, and reading it would ask).

use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};
use http_body_util::BodyExt;

/// How much more of a body is read, and for how long, after its handler.
const DRAIN_BYTES: usize = 64 * 1024;
const DRAIN_TIME: Duration = Duration::from_secs(1);

/// Hands the handler the request's body through a shared cell, and reads
/// and drops what the handler left of it once it has answered.
pub async fn read_unread_body(req: Request, next: Next) -> Response {
    if req.body().is_end_stream() || req.headers().contains_key(header::EXPECT) {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let cell = Arc::new(Mutex::new(body));
    let mut response = next.run(Request::from_parts(parts, Body::new(Shared(Arc::clone(&cell))))).await;
    // The handler has dropped its request by now; if not (a task of its own
    // still holds it), the body is that task's.
    if let Ok(cell) = Arc::try_unwrap(cell)
        && !drain(cell.into_inner().unwrap_or_else(PoisonError::into_inner)).await
    {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Reads and drops `body` up to `DRAIN_BYTES` within `DRAIN_TIME`; true if it
/// was read to its end.
async fn drain(mut body: Body) -> bool {
    let rest = async {
        let mut read = 0;
        while read <= DRAIN_BYTES && !body.is_end_stream() {
            match body.frame().await {
                Some(Ok(frame)) => read += frame.data_ref().map_or(0, Bytes::len),
                None => return true,
                Some(Err(_)) => return false,
            }
        }
        body.is_end_stream()
    };
    tokio::time::timeout(DRAIN_TIME, rest).await.unwrap_or(false)
}

/// The request's body as the handler sees it: the one in the cell.
struct Shared(Arc<Mutex<Body>>);

impl Shared {
    fn body(&self) -> std::sync::MutexGuard<'_, Body> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl HttpBody for Shared {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut *self.body()).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body().is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body().size_hint()
    }
}
