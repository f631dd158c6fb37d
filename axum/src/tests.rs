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

use crate::app_state::{AppState, SharedState};
use crate::errors::ApiError;
use crate::handlers::TokenResponse;
use crate::key_set::{KeySet, Keys};
use crate::metrics::Metrics;
use crate::pool::create_pool;
use crate::refresh_token::RefreshToken;
use crate::routes;
use crate::settings::Settings;
use crate::test_vectors::dev_key_pem;
use crate::token_signer::{TokenPair, TokenSigner};

const ISSUER: &str = "http://localhost:8080";

const INVALID_GRANT: &[u8] = br#"{"error":"invalid_grant","error_description":"invalid username or password"}"#;

const INVALID_REFRESH_TOKEN: &[u8] = br#"{"error":"invalid_grant","error_description":"invalid refresh token"}"#;

/// A well-formed refresh token (spec/vectors.json).
const REFRESH_TOKEN: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

const METHODS: [&str; 10] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "FOO", "QUERY"];
const READ_ONLY_PATHS: [&str; 5] =
    ["/health", "/health/live", "/.well-known/jwks.json", "/.well-known/openid-configuration", "/metrics"];

fn state() -> SharedState {
    state_with(&[])
}

/// The test state with `extra` settings; the database is never reachable.
fn state_with(extra: &[(&str, &str)]) -> SharedState {
    let extra: Vec<(String, String)> = extra.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let settings = Settings::from_lookup(|name| match name {
        // Port 1 on loopback: nothing listens, connecting fails at once.
        "DATABASE_URL" => Some("postgres://auth:auth@127.0.0.1:1/auth".into()),
        "JWT_PRIVATE_KEY" => Some("unused here".into()),
        "DB_ACQUIRE_TIMEOUT_MS" => Some("300".into()),
        _ => extra.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
    })
    .expect("settings");
    let pool = create_pool(&settings).expect("pool");
    let signer =
        TokenSigner::from_pem(&dev_key_pem("rsa-2048"), ISSUER.into(), "channel-api".into(), 600).expect("dev key");
    let keys = Arc::new(Keys::new(KeySet::new(signer, &[], ISSUER)));
    Arc::new(AppState::new(pool, keys, &settings, Metrics::new().expect("metrics"), 2))
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

fn json_refresh(token: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({"grant_type": "refresh_token", "refresh_token": token})).expect("json")
}

async fn metrics_text(app: &Router) -> String {
    let (status, headers, body) = call_app(app.clone(), request("GET", "/metrics")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&headers, header::CONTENT_TYPE), Some("text/plain; version=0.0.4; charset=utf-8"));
    String::from_utf8(body).expect("utf-8")
}

fn assert_lines(text: &str, lines: &[&str]) {
    for line in lines {
        assert!(text.lines().any(|l| l == *line), "missing {line:?} in\n{text}");
    }
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
        for path in ["/nope", "/token/", "/revoke/", "/health/live/x", "/metrics/"] {
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
    let mut cases = Vec::new();
    for method in METHODS.iter().filter(|m| **m != "POST") {
        cases.push((*method, "/token", "POST"));
        cases.push((*method, "/revoke", "POST"));
    }
    for path in READ_ONLY_PATHS {
        for method in METHODS.iter().filter(|m| !matches!(**m, "GET" | "HEAD")) {
            cases.push((*method, path, "GET, HEAD"));
        }
    }
    for (method, path, allow) in cases {
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
        if path != "/metrics" {
            // The scrape's own counters differ between the two; the other bodies do not.
            assert_eq!(header(&head_headers, header::CONTENT_LENGTH), Some(get_body.len().to_string().as_str()));
        }
    }
}

#[tokio::test]
async fn logins_move_their_counters_and_metrics_are_prometheus_text() {
    let app = routes::router(state());
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
    let text = metrics_text(&app).await;
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
    let families: std::collections::BTreeSet<&str> =
        text.lines().filter_map(|l| l.strip_prefix("# TYPE ")).filter_map(|l| l.split(' ').next()).collect();
    let expected: std::collections::BTreeSet<&str> = [
        "simpleauth_token_requests_total",
        "simpleauth_token_request_duration_seconds",
        "simpleauth_password_checks_total",
        "simpleauth_token_signing_duration_seconds",
        "simpleauth_db_pool_connections",
        "simpleauth_db_pool_pending",
        "simpleauth_db_pool_max",
        "simpleauth_key_reloads_total",
        "simpleauth_rejections_total",
    ]
    .into();
    assert_eq!(families, expected);
    // No password was checked: the database never answered.
    assert!(text.lines().filter(|l| l.starts_with("simpleauth_password_checks_total{")).all(|l| l.ends_with(" 0")));
}

#[tokio::test]
async fn revoke_is_not_a_token_request() {
    let app = routes::router(state());
    let (status, _, _) = call_app(app.clone(), post_to("/revoke", Some("application/json"), r#"{"token":"x"}"#)).await;
    assert_eq!(status, StatusCode::OK);
    assert!(metrics_text(&app).await.lines().any(|l| l == "simpleauth_token_request_duration_seconds_count 0"));
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
    let jwks: Value = serde_json::from_slice(&body).expect("json");
    let expected = crate::test_vectors::key_entry("rsa-2048")["jwk"].clone();
    assert_eq!(jwks, serde_json::json!({ "keys": [expected] }));
}

#[tokio::test]
async fn discovery_is_served_with_cache_headers() {
    let (status, headers, body) = call(request("GET", "/.well-known/openid-configuration")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&headers, header::CACHE_CONTROL), Some("public, max-age=300"));
    assert_eq!(header(&headers, header::CONTENT_TYPE), Some("application/json"));
    let doc: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(doc["issuer"], ISSUER);
    assert_eq!(doc["token_endpoint"], format!("{ISSUER}/token"));
    assert_eq!(doc["jwks_uri"], format!("{ISSUER}/.well-known/jwks.json"));
    assert_eq!(doc["id_token_signing_alg_values_supported"], serde_json::json!(["RS256"]));
    assert_eq!(doc["grant_types_supported"], serde_json::json!(["password", "refresh_token"]));
    assert_eq!(doc["revocation_endpoint"], format!("{ISSUER}/revoke"));
    assert_eq!(doc["revocation_endpoint_auth_methods_supported"], serde_json::json!(["none"]));
    assert_eq!(doc.as_object().map(|o| o.len()), Some(11));
}

#[tokio::test]
async fn a_bad_client_id_is_400_before_the_database_is_asked() {
    // The database is down here: a request that got past the checks would be a 503.
    for body in [
        &br#"{"username":"a@b","password":"x","client_id":null}"#[..],
        br#"{"username":"a@b","password":"x","client_id":7}"#,
        br#"{"username":"a@b","password":"x","client_id":""}"#,
        br#"{"username":"a@b","password":"x","client_id":"caf\u00e9"}"#,
    ] {
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
    for ct in [
        None,
        Some("text/plain"),
        Some("application/jsonx"),
        Some("application"),
        Some("multipart/form-data; boundary=x"),
    ] {
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
async fn invalid_grant_bytes_are_fixed() {
    use axum::response::IntoResponse as _;
    let body = to_bytes(ApiError::InvalidGrant.into_response().into_body(), usize::MAX).await.expect("body");
    assert_eq!(&body[..], INVALID_GRANT);
}

#[test]
fn the_token_response_has_the_contracts_five_members_in_order() {
    let pair = TokenPair { access_token: "a.b.c".into(), id_token: "d.e.f".into(), expires_in: 600 };
    let refresh = RefreshToken::parse(REFRESH_TOKEN).expect("shape");
    let body = serde_json::to_vec(&TokenResponse::new(&pair, &refresh)).expect("json");
    let expected = format!(
        r#"{{"access_token":"a.b.c","id_token":"d.e.f","token_type":"Bearer","expires_in":600,"refresh_token":"{REFRESH_TOKEN}"}}"#
    );
    assert_eq!(body, expected.as_bytes());
}

#[tokio::test]
async fn a_malformed_refresh_token_is_invalid_grant_without_the_database() {
    // The database is down here: a token that reached it would be a 503.
    let v = crate::test_vectors::vectors();
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
    for (content_type, body) in [
        ("application/json", r#"{"token":"not-a-refresh-token"}"#.to_owned()),
        ("application/json; charset=utf-8", r#"{"token":"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln"}"#.to_owned()),
        ("application/x-www-form-urlencoded", "token=abc&token_type_hint=refresh_token".to_owned()),
    ] {
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
    for body in ["", "token=", "token=a&token=a", "token_type_hint=refresh_token"] {
        let result = call(post_to("/revoke", Some("application/x-www-form-urlencoded"), body)).await;
        assert_error(&result, 400, "invalid_request");
    }
    for body in ["{}", r#"{"token":""}"#, r#"{"token":5}"#, r#"{"token":null}"#, "[]", "{"] {
        assert_error(&call(post_to("/revoke", Some("application/json"), body)).await, 400, "invalid_request");
    }
}

#[tokio::test]
async fn a_locked_address_is_429_before_the_database_and_counted() {
    let state = state_with(&[("LOGIN_IP_MAX_FAILURES", "2"), ("LOGIN_FAILURE_WINDOW_SECONDS", "60")]);
    let locked = "192.0.2.7:40000";
    let now = std::time::Instant::now();
    let locked_ip = locked.parse::<SocketAddr>().expect("addr").ip();
    state.tokens.addresses.record_failure(locked_ip, now);
    state.tokens.addresses.record_failure(locked_ip, now);
    let app = routes::router(state);
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

    assert_lines(
        &metrics_text(&app).await,
        &[
            r#"simpleauth_rejections_total{reason="address_locked"} 1"#,
            r#"simpleauth_rejections_total{reason="username_locked"} 0"#,
            r#"simpleauth_rejections_total{reason="overload"} 0"#,
            r#"simpleauth_rejections_total{reason="refresh_reuse"} 0"#,
            r#"simpleauth_token_requests_total{error="temporarily_unavailable",status="429"} 1"#,
            r#"simpleauth_token_requests_total{error="temporarily_unavailable",status="503"} 2"#,
        ],
    );
}

#[tokio::test]
async fn a_shed_check_is_a_failure_of_its_address_only() {
    let state = state_with(&[("LOGIN_IP_MAX_FAILURES", "2"), ("LOGIN_FAILURE_WINDOW_SECONDS", "60")]);
    let tokens = &state.tokens;
    let flooding: std::net::IpAddr = "192.0.2.9".parse().expect("ip");
    let other: std::net::IpAddr = "192.0.2.10".parse().expect("ip");
    let now = std::time::Instant::now();
    // An answer that was not shed counts nothing here (an invalid_grant is counted by the grant itself).
    assert!(matches!(tokens.shed(Err::<(), _>(ApiError::InvalidGrant), Some(flooding)), Err(ApiError::InvalidGrant)));
    assert!(tokens.shed(Ok(()), Some(flooding)).is_ok());
    assert!(tokens.addresses.check(flooding, now).is_ok());
    for _ in 0..2 {
        assert!(matches!(tokens.shed(Err::<(), _>(ApiError::Overloaded), Some(flooding)), Err(ApiError::Overloaded)));
    }
    assert!(tokens.addresses.check(flooding, now).is_err(), "two shed checks lock the address");
    assert!(tokens.addresses.check(other, now).is_ok(), "and no other");
    // No address (an untracked client): shed, counted as a rejection, nothing to lock.
    assert!(matches!(tokens.shed(Err::<(), _>(ApiError::Overloaded), None), Err(ApiError::Overloaded)));
    let app = routes::router(Arc::clone(&state));
    assert_lines(&metrics_text(&app).await, &[r#"simpleauth_rejections_total{reason="overload"} 3"#]);
}

#[tokio::test]
async fn proxy_headers_name_the_address_only_when_trusted() {
    let client: std::net::IpAddr = "203.0.113.9".parse().expect("ip");
    for (trust, locked) in [("true", true), ("false", false)] {
        let state = state_with(&[("LOGIN_IP_MAX_FAILURES", "1"), ("TRUST_PROXY_HEADERS", trust)]);
        state.tokens.addresses.record_failure(client, std::time::Instant::now());
        let mut request = post_token(Some("application/json"), r#"{"username":"a@b","password":"x"}"#);
        request.headers_mut().insert("Fly-Client-IP", "203.0.113.9".parse().expect("value"));
        let (status, _, _) = call_with(state, from_peer(request, "10.1.1.1:5000")).await;
        let expected = if locked { StatusCode::TOO_MANY_REQUESTS } else { StatusCode::SERVICE_UNAVAILABLE };
        assert_eq!(status, expected, "TRUST_PROXY_HEADERS={trust}");
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

    struct Response {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    }

    impl Response {
        fn header(&self, name: &str) -> Option<&str> {
            self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
        }
    }

    /// A server of the test state on a free loopback port; it stops with the test's runtime.
    async fn serve() -> u16 {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        let app = routes::router(state()).into_make_service_with_connect_info::<SocketAddr>();
        tokio::spawn(async move { axum::serve(listener, app).await });
        port
    }

    fn parse(raw: &[u8]) -> Response {
        let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("end of headers");
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let mut lines = head.split("\r\n");
        let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).expect("status");
        let headers =
            lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())).collect();
        Response { status, headers, body: raw[split + 4..].to_vec() }
    }

    /// One request on its own connection (`Connection: close`), read to EOF.
    /// The client does not shut down its side: hyper closes a connection at
    /// once when it reads EOF in the middle of a request (no half-close).
    fn exchange(port: u16, request: &str) -> Response {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
        stream.write_all(request.as_bytes()).expect("write");
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).expect("read");
        parse(&raw)
    }

    fn request(method: &str, path: &str, body: Option<(&str, bool)>) -> String {
        let mut text = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
        match body {
            None => text.push_str("\r\n"),
            Some((body, false)) => text
                .push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len())),
            Some((body, true)) => text.push_str(&format!(
                "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
                body.len()
            )),
        }
        text
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_method_gets_the_contracts_answer() {
        let port = serve().await;
        let credentials = r#"{"username":"a","password":"b"}"#;
        let failures = tokio::task::spawn_blocking(move || {
            let mut failures = Vec::new();
            for method in METHODS {
                for body in [None, Some((credentials, false)), Some((credentials, true))] {
                    for (path, allow) in [
                        ("/token", Some("POST")),
                        ("/revoke", Some("POST")),
                        ("/health/live", Some("GET, HEAD")),
                        ("/.well-known/jwks.json", Some("GET, HEAD")),
                        ("/.well-known/openid-configuration", Some("GET, HEAD")),
                        ("/metrics", Some("GET, HEAD")),
                        ("/nope", None),
                        ("/token/", None),
                    ] {
                        let expected = match (allow, method) {
                            (None, _) => 404,
                            (Some("POST"), "POST") => continue, // the endpoints proper: tested above
                            (Some("GET, HEAD"), "GET" | "HEAD") => 200,
                            _ => 405,
                        };
                        let r = exchange(port, &request(method, path, body));
                        let what = format!("{method} {path} body={body:?}");
                        if r.status != expected {
                            failures.push(format!("{what}: {} instead of {expected}", r.status));
                            continue;
                        }
                        let json_answer = !(path == "/metrics" && expected == 200);
                        if json_answer && r.header("content-type") != Some("application/json") {
                            failures.push(format!("{what}: content-type {:?}", r.header("content-type")));
                        }
                        if expected == 405 && r.header("allow") != allow {
                            failures.push(format!("{what}: allow {:?}", r.header("allow")));
                        }
                        if method == "HEAD" {
                            if !r.body.is_empty() {
                                failures.push(format!("{what}: HEAD answered with a body"));
                            }
                        } else if json_answer {
                            let Ok(json) = serde_json::from_slice::<Value>(&r.body) else {
                                failures.push(format!("{what}: body is not JSON"));
                                continue;
                            };
                            let code = match expected {
                                404 => Some("not_found"),
                                405 => Some("invalid_request"),
                                _ => None,
                            };
                            if code.is_some_and(|code| json["error"] != code) {
                                failures.push(format!("{what}: body {json}"));
                            }
                        }
                    }
                }
            }
            failures
        })
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
                let response = parse(&raw);
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
}
