//! Handler and error-mapping tests through the `Router` (`tower::ServiceExt::
//! oneshot`), and the method table and body limits over a real socket
//! (`axum::serve` on a loopback port, so hyper's HTTP/1.1 codec is part of
//! the test). No database runs here: the pool points at a closed port, which
//! also exercises the 503 path. Paths that need real users are covered by
//! spec/conformance.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::ConnectInfo;
use axum::http::header::{self, HeaderMap};
use axum::http::{Method, Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt as _;

use simple_auth_core::test_support::{
    self, ADDRESS_LOCK_METRIC_LINES, BAD_CLIENT_ID_JSON, INVALID_REFRESH_TOKEN, METHODS, READ_ONLY_PATHS,
    REFRESH_TOKEN, REVOKE_REFUSED, REVOKE_WITHOUT_A_LOOKUP, UNSUPPORTED_CONTENT_TYPES, assert_lines, json_refresh,
};
use simple_auth_core::test_vectors;

use crate::{STACK, SharedState, routes};

fn state() -> SharedState {
    state_with(&[])
}

/// The test state with `extra` settings; the database is never reachable.
fn state_with(extra: &[(&str, &str)]) -> SharedState {
    Arc::new(test_support::app_state(extra, STACK))
}

type Answer = (StatusCode, HeaderMap, Vec<u8>);

async fn call(req: Request<Body>) -> Answer {
    call_app(routes::router(state()), req).await
}

async fn call_with(state: SharedState, req: Request<Body>) -> Answer {
    call_app(routes::router(state), req).await
}

async fn call_app(app: Router, req: Request<Body>) -> Answer {
    let response = app.oneshot(req).await.expect("infallible");
    let status = response.status();
    let headers = response.headers().clone();
    let body = to_bytes(response.into_body(), usize::MAX).await.expect("body").to_vec();
    (status, headers, body)
}

fn header(headers: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn assert_error(result: &Answer, status: u16, code: &str) {
    let (s, headers, body) = result;
    assert_eq!(s.as_u16(), status, "{}", String::from_utf8_lossy(body));
    assert_eq!(header(headers, header::CONTENT_TYPE), Some("application/json"));
    assert_eq!(header(headers, header::CACHE_CONTROL), Some("no-store"));
    let json: Value = serde_json::from_slice(body).expect("json body");
    assert_eq!(json["error"], code, "{json}");
}

fn request(method: &str, path: &str) -> Request<Body> {
    Request::builder().method(method).uri(path).body(Body::empty()).expect("request")
}

fn post_to(path: &str, content_type: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    let mut req = Request::builder().method(Method::POST).uri(path);
    if let Some(ct) = content_type {
        req = req.header(header::CONTENT_TYPE, ct);
    }
    req.body(body.into()).expect("request")
}

fn post_token(content_type: Option<&str>, body: impl Into<Body>) -> Request<Body> {
    post_to("/token", content_type, body)
}

/// `req` as if it came from `peer` (what `into_make_service_with_connect_info` adds).
fn from_peer(mut req: Request<Body>, peer: &str) -> Request<Body> {
    let peer: SocketAddr = peer.parse().expect("socket address");
    req.extensions_mut().insert(ConnectInfo(peer));
    req
}

/// The Prometheus text of the metrics port's router over `state`.
async fn metrics_text(state: &SharedState) -> String {
    let (status, headers, body) = call_app(routes::metrics_router(Arc::clone(state)), request("GET", "/metrics")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&headers, header::CONTENT_TYPE), Some("text/plain; version=0.0.4; charset=utf-8"));
    String::from_utf8(body).expect("utf-8")
}

#[tokio::test]
async fn unknown_paths_are_json_404() {
    for path in ["/", "/nope", "/token/", "/TOKEN", "/health/x", "/.well-known/jwks.json/x", "/revoke/"] {
        let (status, headers, body) = call(request("GET", path)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(body, br#"{"error":"not_found"}"#);
        assert_eq!(header(&headers, header::CONTENT_TYPE), Some("application/json"));
    }
    let result = call(post_to("/login", Some("application/json"), "{}")).await;
    assert_eq!(result.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn unknown_paths_are_404_for_every_method() {
    for method in METHODS {
        for path in ["/nope", "/token/", "/revoke/", "/health/live/x", "/metrics", "/metrics/"] {
            let (status, headers, body) = call(request(method, path)).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}");
            let expected: &[u8] = if method == "HEAD" { b"" } else { br#"{"error":"not_found"}"# };
            assert_eq!(body, expected, "{method} {path}");
            assert_eq!(header(&headers, header::CONTENT_TYPE), Some("application/json"));
        }
    }
}

#[tokio::test]
async fn wrong_methods_are_405_with_allow() {
    for (method, path, allow) in test_support::wrong_method_cases() {
        let req = Request::builder()
            .method(method)
            .uri(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(r#"{"username":"a","password":"b"}"#))
            .expect("request");
        let result = call(req).await;
        assert_eq!(result.0, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
        assert_eq!(header(&result.1, header::ALLOW), Some(allow), "{method} {path}");
        assert_eq!(header(&result.1, header::CACHE_CONTROL), Some("no-store"), "{method} {path}");
        assert_eq!(header(&result.1, header::CONTENT_TYPE), Some("application/json"), "{method} {path}");
        if method == "HEAD" {
            assert!(result.2.is_empty(), "{method} {path}: a HEAD answer has no body");
        } else {
            let json: Value = serde_json::from_slice(&result.2).expect("json");
            assert_eq!(json["error"], "invalid_request", "{method} {path}");
            assert!(json["error_description"].is_string());
        }
    }
}

#[tokio::test]
async fn head_answers_like_get_without_a_body() {
    for path in READ_ONLY_PATHS {
        let (get_status, get_headers, get_body) = call(request("GET", path)).await;
        let (head_status, head_headers, head_body) = call(request("HEAD", path)).await;
        assert_eq!(head_status, get_status, "{path}");
        assert!(head_body.is_empty(), "{path}");
        for name in [header::CONTENT_TYPE, header::CACHE_CONTROL] {
            assert_eq!(head_headers.get(&name), get_headers.get(&name), "{path} {name}");
        }
        assert_eq!(header(&head_headers, header::CONTENT_LENGTH), Some(get_body.len().to_string().as_str()));
    }
}

#[tokio::test]
async fn logins_move_their_counters_and_metrics_are_prometheus_text_on_the_metrics_port() {
    let state = state();
    let app = routes::router(Arc::clone(&state));
    let john = br#"{"username":"john@example.com","password":"TopSecret0!"}"#.to_vec();
    // The database is down here: one 503 login, one 415, one 400; a 405 is not a token request.
    let (status, _, _) = call_app(app.clone(), post_token(Some("application/json"), john.clone())).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let (status, _, _) = call_app(app.clone(), post_token(Some("text/plain"), john)).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let (status, _, _) = call_app(app.clone(), post_token(Some("application/json"), "[]")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _, _) = call_app(app.clone(), request("GET", "/token")).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    let (status, _, _) = call_app(app.clone(), request("GET", "/metrics")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "not on the public port");
    let text = metrics_text(&state).await;
    assert_lines(
        &text,
        &[
            r#"simpleauth_token_requests_total{error="temporarily_unavailable",status="503"} 1"#,
            r#"simpleauth_token_requests_total{error="invalid_request",status="415"} 1"#,
            r#"simpleauth_token_requests_total{error="invalid_request",status="400"} 1"#,
            r#"simpleauth_token_requests_total{error="none",status="200"} 0"#,
            "simpleauth_token_request_duration_seconds_count 3",
            "simpleauth_token_signing_duration_seconds_count 0",
            "simpleauth_db_pool_max 10",
            "simpleauth_db_pool_pending 0",
        ],
    );
    test_support::assert_metric_families(&text);
}

#[tokio::test]
async fn revoke_is_not_a_token_request() {
    let state = state();
    let app = routes::router(Arc::clone(&state));
    let (status, _, _) = call_app(app.clone(), post_to("/revoke", Some("application/json"), r#"{"token":"x"}"#)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(metrics_text(&state).await.lines().any(|l| l == "simpleauth_token_request_duration_seconds_count 0"));
}

#[tokio::test]
async fn liveness_never_asks_the_database() {
    // The test pool points at a closed port: /health is down, /health/live is up.
    let (status, headers, body) = call(request("GET", "/health/live")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, br#"{"status":"up"}"#);
    assert_eq!(header(&headers, header::CONTENT_TYPE), Some("application/json"));
    assert_eq!(header(&headers, header::CACHE_CONTROL), Some("no-store"));
    let (status, _, body) = call(request("GET", "/health")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(body, br#"{"status":"down"}"#);
}

#[tokio::test]
async fn jwks_is_served_with_cache_headers() {
    let (status, headers, body) = call(request("GET", "/.well-known/jwks.json")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&headers, header::CACHE_CONTROL), Some("public, max-age=300"));
    assert_eq!(header(&headers, header::CONTENT_TYPE), Some("application/json"));
    test_support::assert_jwks(&body);
}

#[tokio::test]
async fn discovery_is_served_with_cache_headers() {
    let (status, headers, body) = call(request("GET", "/.well-known/openid-configuration")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&headers, header::CACHE_CONTROL), Some("public, max-age=300"));
    assert_eq!(header(&headers, header::CONTENT_TYPE), Some("application/json"));
    test_support::assert_discovery(&body);
}

#[tokio::test]
async fn a_bad_client_id_is_400_before_the_database_is_asked() {
    // The database is down here: a request that got past the checks would be a 503.
    for body in BAD_CLIENT_ID_JSON {
        assert_error(&call(post_token(Some("application/json"), body.to_vec())).await, 400, "invalid_request");
    }
    let long = format!("grant_type=password&username=a&password=b&client_id={}", "c".repeat(129));
    for form in ["grant_type=password&username=a&password=b&client_id=x&client_id=x", long.as_str()] {
        let result = call(post_token(Some("application/x-www-form-urlencoded"), form.to_owned())).await;
        assert_error(&result, 400, "invalid_request");
    }
    let good = "grant_type=password&username=a&password=b&client_id=web";
    assert_error(
        &call(post_token(Some("application/x-www-form-urlencoded"), good)).await,
        503,
        "temporarily_unavailable",
    );
}

#[tokio::test]
async fn content_type_is_checked_first() {
    for ct in UNSUPPORTED_CONTENT_TYPES {
        assert_error(&call(post_token(ct, "{}")).await, 415, "invalid_request");
        // Even before the size.
        assert_error(&call(post_token(ct, vec![b' '; 9000])).await, 415, "invalid_request");
    }
}

#[tokio::test]
async fn bodies_over_8192_bytes_are_413_and_exactly_8192_is_read() {
    assert_error(&call(post_token(Some("application/json"), vec![b' '; 8193])).await, 413, "invalid_request");
    assert_error(&call(post_to("/revoke", Some("application/json"), vec![b' '; 8193])).await, 413, "invalid_request");
    // 8192 bytes of a JSON array: read in full, then refused as not an object (400, not 413).
    let mut exact = vec![b' '; 8192];
    exact[0] = b'[';
    exact[8191] = b']';
    assert_error(&call(post_token(Some("application/json"), exact)).await, 400, "invalid_request");
    // An announced length over the limit is refused without reading the body.
    let announced = Request::builder()
        .method(Method::POST)
        .uri("/token")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_LENGTH, "1000000")
        .body(Body::from("{}"))
        .expect("request");
    assert_error(&call(announced).await, 413, "invalid_request");
}

#[tokio::test]
async fn json_and_form_validation_errors() {
    for body in [&b"{"[..], b"[]", b"null", b"42", b"", br#"{"username":"a@b"}"#, br#"{"username":5,"password":"x"}"#] {
        assert_error(&call(post_token(Some("application/json"), body.to_vec())).await, 400, "invalid_request");
    }
    let unsupported = br#"{"username":"a@b","password":"x","grant_type":"client_credentials"}"#;
    let result = call(post_token(Some("Application/JSON; charset=utf-8"), unsupported.to_vec())).await;
    assert_error(&result, 400, "unsupported_grant_type");
    let repeated = "grant_type=password&username=a%40b&username=c%40d&password=x";
    assert_error(&call(post_token(Some("application/x-www-form-urlencoded"), repeated)).await, 400, "invalid_request");
}

#[tokio::test]
async fn database_down_is_503_with_retry_after() {
    let body = br#"{"username":"john@example.com","password":"x"}"#.to_vec();
    let result = call(post_token(Some("application/json"), body)).await;
    assert_error(&result, 503, "temporarily_unavailable");
    assert_eq!(header(&result.1, header::RETRY_AFTER), Some("1"));
}

#[tokio::test]
async fn a_malformed_refresh_token_is_invalid_grant_without_the_database() {
    // The database is down here: a token that reached it would be a 503.
    let v = test_vectors::vectors();
    for entry in v["refresh_tokens"]["malformed"].as_array().expect("malformed") {
        let token = entry["token"].as_str().expect("token");
        let (status, headers, body) = call(post_token(Some("application/json"), json_refresh(token))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{}", entry["name"]);
        assert_eq!(body, INVALID_REFRESH_TOKEN, "{}", entry["name"]);
        assert_eq!(header(&headers, header::CACHE_CONTROL), Some("no-store"));
    }
    let form = "grant_type=refresh_token&refresh_token=too-short&client_id=web";
    let (status, _, body) = call(post_token(Some("application/x-www-form-urlencoded"), form)).await;
    assert_eq!((status, body.as_slice()), (StatusCode::BAD_REQUEST, INVALID_REFRESH_TOKEN));
}

#[tokio::test]
async fn a_well_formed_refresh_token_asks_the_database() {
    let result = call(post_token(Some("application/json"), json_refresh(REFRESH_TOKEN))).await;
    assert_error(&result, 503, "temporarily_unavailable");
    assert_eq!(header(&result.1, header::RETRY_AFTER), Some("1"));
    let form = format!("grant_type=refresh_token&refresh_token={REFRESH_TOKEN}");
    let result = call(post_token(Some("application/x-www-form-urlencoded"), form)).await;
    assert_error(&result, 503, "temporarily_unavailable");
    // A bad client_id is still a 400 before anything else.
    let body = format!(r#"{{"grant_type":"refresh_token","refresh_token":"{REFRESH_TOKEN}","client_id":""}}"#);
    assert_error(&call(post_token(Some("application/json"), body)).await, 400, "invalid_request");
}

#[tokio::test]
async fn revoke_answers_200_empty_for_any_string_and_asks_the_database_only_for_a_token() {
    for (content_type, body) in REVOKE_WITHOUT_A_LOOKUP {
        let (status, headers, body) = call(post_to("/revoke", Some(content_type), body)).await;
        assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
        assert!(body.is_empty());
        assert_eq!(header(&headers, header::CACHE_CONTROL), Some("no-store"));
    }
    // A well-formed token is looked up: the database is down, so 503.
    let form = format!("token={REFRESH_TOKEN}");
    let result = call(post_to("/revoke", Some("application/x-www-form-urlencoded"), form)).await;
    assert_error(&result, 503, "temporarily_unavailable");
    assert_eq!(header(&result.1, header::RETRY_AFTER), Some("1"));
}

#[tokio::test]
async fn revoke_refuses_like_the_token_endpoint() {
    assert_error(&call(post_to("/revoke", None, "token=a")).await, 415, "invalid_request");
    assert_error(&call(post_to("/revoke", Some("text/plain"), "token=a")).await, 415, "invalid_request");
    let big = format!("token={}", "a".repeat(8200));
    assert_error(
        &call(post_to("/revoke", Some("application/x-www-form-urlencoded"), big)).await,
        413,
        "invalid_request",
    );
    for (content_type, body) in REVOKE_REFUSED {
        assert_error(&call(post_to("/revoke", Some(content_type), body)).await, 400, "invalid_request");
    }
}

#[tokio::test]
async fn a_locked_address_is_429_before_the_database_and_counted() {
    let state = state_with(&[("LOGIN_IP_MAX_FAILURES", "2"), ("LOGIN_FAILURE_WINDOW_SECONDS", "60")]);
    let locked = "192.0.2.7:40000";
    let now = std::time::Instant::now();
    let locked_ip = locked.parse::<SocketAddr>().expect("addr").ip();
    for _ in 0..2 {
        let _ = state.tokens.addresses.reserve(locked_ip, now).expect("reserved");
    }
    let app = routes::router(Arc::clone(&state));
    let login = br#"{"username":"john@example.com","password":"TopSecret0!"}"#.to_vec();
    let (status, headers, body) =
        call_app(app.clone(), from_peer(post_token(Some("application/json"), login.clone()), locked)).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = header(&headers, header::RETRY_AFTER).expect("Retry-After").parse().expect("seconds");
    assert!((59..=60).contains(&retry_after), "{retry_after}");
    assert_eq!(header(&headers, header::CACHE_CONTROL), Some("no-store"));
    assert_eq!(
        body,
        br#"{"error":"temporarily_unavailable","error_description":"too many failed logins; try again later"}"#
    );
    // Another address goes on to the database (down: 503); a refresh is never limited.
    let other = from_peer(post_token(Some("application/json"), login), "192.0.2.8:40000");
    assert_eq!(call_app(app.clone(), other).await.0, StatusCode::SERVICE_UNAVAILABLE);
    let refresh = from_peer(post_token(Some("application/json"), json_refresh(REFRESH_TOKEN)), locked);
    assert_eq!(call_app(app.clone(), refresh).await.0, StatusCode::SERVICE_UNAVAILABLE);
    // A bad request from the locked address is still a 400: validation comes first.
    let bad = from_peer(post_token(Some("application/json"), "{}"), locked);
    assert_eq!(call_app(app.clone(), bad).await.0, StatusCode::BAD_REQUEST);

    assert_lines(&metrics_text(&state).await, &ADDRESS_LOCK_METRIC_LINES);
}

#[tokio::test]
async fn x_forwarded_for_names_the_address_only_behind_a_trusted_proxy() {
    let client: std::net::IpAddr = "203.0.113.9".parse().expect("ip");
    for (peer, fields, locked) in [
        // The nearest untrusted hop: the client, past a trusted one, over two header fields.
        ("10.1.1.1:5000", &["203.0.113.9"][..], true),
        ("10.1.1.1:5000", &["192.0.2.1, 203.0.113.9", "10.2.2.2"], true),
        ("10.1.1.1:5000", &["203.0.113.9, 192.0.2.1"], false),
        // Not an address: the walk stops at the peer.
        ("10.1.1.1:5000", &["203.0.113.9, unknown"], false),
        // An untrusted peer's header is not read.
        ("198.51.100.1:5000", &["203.0.113.9"], false),
    ] {
        let state = state_with(&[("LOGIN_IP_MAX_FAILURES", "1"), ("TRUSTED_PROXIES", "10.0.0.0/8")]);
        let _ = state.tokens.addresses.reserve(client, std::time::Instant::now()).expect("reserved");
        let mut request = post_token(Some("application/json"), r#"{"username":"a@b","password":"x"}"#);
        for field in fields {
            request.headers_mut().append("X-Forwarded-For", field.parse().expect("value"));
        }
        request.headers_mut().insert("Fly-Client-IP", "203.0.113.9".parse().expect("value"));
        let (status, _, _) = call_with(state, from_peer(request, peer)).await;
        let expected = if locked { StatusCode::TOO_MANY_REQUESTS } else { StatusCode::SERVICE_UNAVAILABLE };
        assert_eq!(status, expected, "peer {peer} X-Forwarded-For {fields:?}");
    }
}

#[tokio::test]
async fn one_ipv6_slash_64_is_one_client() {
    let state = state_with(&[("LOGIN_IP_MAX_FAILURES", "1")]);
    let _ = state.tokens.addresses.reserve("2001:db8:1:2::1".parse().expect("ip"), std::time::Instant::now());
    let app = routes::router(state);
    let login = r#"{"username":"a@b","password":"x"}"#;
    for (peer, expected) in [
        ("[2001:db8:1:2:ffff::9]:4000", StatusCode::TOO_MANY_REQUESTS),
        ("[2001:db8:1:3::1]:4000", StatusCode::SERVICE_UNAVAILABLE),
    ] {
        let request = from_peer(post_token(Some("application/json"), login), peer);
        assert_eq!(call_app(app.clone(), request).await.0, expected, "{peer}");
    }
}

#[tokio::test]
async fn without_a_known_peer_there_is_no_address_limit() {
    // No ConnectInfo (the router served without it): no address, so no address lock either.
    let state = state_with(&[("LOGIN_IP_MAX_FAILURES", "1")]);
    let body = r#"{"username":"a@b","password":"x"}"#;
    assert_eq!(call_with(state, post_token(Some("application/json"), body)).await.0, StatusCode::SERVICE_UNAVAILABLE);
}

/// Through `axum::serve` on a loopback port, so hyper's HTTP/1.1 codec is
/// part of the test: custom method tokens, bodies (chunked or not) on 405/404
/// answers, HEAD answers without a body, the body limit on a chunked body,
/// and the connection still answering after a refused request.
mod over_the_wire {
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::Duration;

    use super::*;
    use simple_auth_core::test_support::{Response, request};

    /// A server of the test state on a free loopback port; it stops with the test's runtime.
    async fn serve() -> u16 {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        let app = routes::router(state()).into_make_service_with_connect_info::<SocketAddr>();
        tokio::spawn(async move { axum::serve(listener, app).await });
        port
    }

    /// One request on its own connection, read to EOF, without a
    /// half-close: hyper closes a connection at once when it reads EOF in
    /// the middle of a request.
    fn exchange(port: u16, request: &str) -> Response {
        test_support::exchange(port, request, false)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_method_gets_the_contracts_answer() {
        let port = serve().await;
        let failures = tokio::task::spawn_blocking(move || {
            test_support::method_table_failures(port, &["/nope", "/token/", "/metrics"], false)
        })
        .await
        .expect("client thread");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_metrics_port_serves_get_metrics_alone() {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        tokio::spawn(async move { axum::serve(listener, routes::metrics_router(state()).into_make_service()).await });
        let others = ["/", "/token", "/revoke", "/health", "/health/live", "/.well-known/jwks.json", "/metrics/"];
        let failures = tokio::task::spawn_blocking(move || test_support::metrics_port_failures(port, &others, false))
            .await
            .expect("client thread");
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_chunked_body_is_held_to_the_limit() {
        let port = serve().await;
        let answers = tokio::task::spawn_blocking(move || {
            let mut exact = vec![b' '; 8192];
            exact[0] = b'[';
            exact[8191] = b']';
            let exact = String::from_utf8(exact).expect("ascii");
            let over = " ".repeat(8193);
            [exact, over].map(|body| exchange(port, &request("POST", "/token", Some((&body, true)))))
        })
        .await
        .expect("client thread");
        assert_eq!(answers[0].status, 400, "exactly 8192 bytes are read, then refused as not an object");
        assert_eq!(answers[1].status, 413);
        assert_eq!(serde_json::from_slice::<Value>(&answers[1].body).expect("json")["error"], "invalid_request");
    }

    /// Reads one response whose body has a `Content-Length`.
    fn read_response(stream: &mut TcpStream) -> Option<Response> {
        let mut raw = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            if let Some(split) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                let response = Response::parse(&raw);
                let length: usize = response.header("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
                if raw.len() >= split + 4 + length {
                    return Some(Response { body: raw[split + 4..split + 4 + length].to_vec(), ..response });
                }
            }
            match stream.read(&mut buf) {
                Ok(0) | Err(_) => return None,
                Ok(n) => raw.extend_from_slice(&buf[..n]),
            }
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_connection_answers_the_next_request_after_a_refused_body() {
        // A body that arrived with its request is read and discarded (hyper
        // drains what it has), so the connection carries the next request.
        let port = serve().await;
        let outcomes = tokio::task::spawn_blocking(move || {
            let body = r#"{"username":"a","password":"b"}"#;
            ["PUT /token", "QUERY /revoke", "DELETE /health", "POST /nope", "POST /token"].map(|target| {
                let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
                stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
                let first = format!(
                    "{target} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                stream.write_all(first.as_bytes()).expect("write");
                let answer = read_response(&mut stream).map(|r| r.status);
                let next = stream
                    .write_all(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
                    .ok()
                    .and_then(|()| read_response(&mut stream))
                    .map(|r| (r.status, r.body));
                (target, answer, next)
            })
        })
        .await
        .expect("client thread");
        for (target, answer, next) in outcomes {
            let expected = match target {
                "POST /nope" => 404,
                "POST /token" => 415,
                _ => 405,
            };
            assert_eq!(answer, Some(expected), "{target}");
            assert_eq!(
                next,
                Some((200, br#"{"status":"up"}"#.to_vec())),
                "{target}: the next request on the connection"
            );
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_body_too_long_to_read_after_a_refusal_gets_an_answer_that_closes_the_connection() {
        // 413 by Content-Length for 1 MiB: more than the middleware reads
        // after an answer, so hyper closes the connection, and the answer
        // must say so, or the client sends its next request into the close.
        let port = serve().await;
        let answer = tokio::task::spawn_blocking(move || {
            let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
            stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
            let head =
                "POST /token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1048576\r\n\r\n";
            stream.write_all(head.as_bytes()).expect("head");
            stream.write_all(&[b' '; 128 * 1024]).expect("the first 128 KiB of the body");
            read_response(&mut stream)
        })
        .await
        .expect("client thread")
        .expect("an answer");
        assert_eq!(answer.status, 413);
        assert_eq!(answer.header("connection"), Some("close"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_body_still_arriving_after_a_refusal_is_read_so_the_answer_arrives() {
        // Each request's body comes partly after a pause, as through a proxy:
        // the server reads the rest before its answer (hyper alone reads what
        // has arrived and closes, and the client still sending is reset), so
        // the answer arrives and the connection carries the next request.
        let chunks = |n: usize| format!("400\r\n{}\r\n", " ".repeat(1024)).repeat(n);
        let json = r#"{"username":"a","password":"b"}"#;
        let cases = [
            (
                413,
                "POST /token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                    .to_owned()
                    + &chunks(12),
                chunks(8) + "0\r\n\r\n",
            ),
            (
                404,
                format!("POST /nope HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", json.len()),
                json.to_owned(),
            ),
            (
                405,
                format!("PUT /token HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", json.len()),
                json.to_owned(),
            ),
            (
                415,
                format!("POST /token HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n", json.len()),
                json.to_owned(),
            ),
        ];
        let port = serve().await;
        let outcomes = tokio::task::spawn_blocking(move || {
            cases.map(|(expected, first, rest)| {
                let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
                stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
                stream.write_all(first.as_bytes()).expect("first part");
                std::thread::sleep(Duration::from_millis(200));
                let sent = stream.write_all(rest.as_bytes()).is_ok();
                let answer = read_response(&mut stream).map(|r| r.status);
                let next = stream
                    .write_all(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
                    .ok()
                    .and_then(|()| read_response(&mut stream))
                    .map(|r| r.status);
                (expected, sent, answer, next)
            })
        })
        .await
        .expect("client thread");
        for (expected, sent, answer, next) in outcomes {
            assert!(sent, "{expected}: the rest of the body could be sent");
            assert_eq!(answer, Some(expected));
            assert_eq!(next, Some(200), "{expected}: the next request on the connection");
        }
    }
}
