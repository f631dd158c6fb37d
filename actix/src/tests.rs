//! Handler and error-mapping tests through actix's test service. No database
//! runs here: the pool points at a closed port, which also exercises the 503
//! path. Paths that need real users are covered by spec/conformance.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderMap};
use actix_web::{App, test as atest, web};
use serde_json::Value;

use simple_auth_core::app_state::AppState;
use simple_auth_core::test_support::{
    self, ADDRESS_LOCK_METRIC_LINES, BAD_CLIENT_ID_JSON, INVALID_REFRESH_TOKEN, METHODS, READ_ONLY_PATHS,
    REFRESH_TOKEN, REVOKE_REFUSED, REVOKE_WITHOUT_A_LOOKUP, UNSUPPORTED_CONTENT_TYPES, assert_lines, json_refresh,
};
use simple_auth_core::test_vectors;

use crate::{STACK, handlers};

fn state() -> web::Data<AppState> {
    state_with(&[])
}

/// The test state with `extra` settings; the database is never reachable.
fn state_with(extra: &[(&str, &str)]) -> web::Data<AppState> {
    web::Data::new(test_support::app_state(extra, STACK))
}

async fn call(req: atest::TestRequest) -> (StatusCode, HeaderMap, Vec<u8>) {
    call_with(state(), req).await
}

async fn call_with(state: web::Data<AppState>, req: atest::TestRequest) -> (StatusCode, HeaderMap, Vec<u8>) {
    let app = atest::init_service(App::new().app_data(state).configure(handlers::routes)).await;
    let response = atest::call_service(&app, req.to_request()).await;
    let status = response.status();
    let headers = response.headers().clone();
    let body = atest::read_body(response).await.to_vec();
    (status, headers, body)
}

/// The Prometheus text of the metrics port's `App` over `state`.
async fn scrape(state: web::Data<AppState>) -> String {
    let app = atest::init_service(App::new().app_data(state).configure(handlers::metrics_routes)).await;
    let response = atest::call_service(&app, atest::TestRequest::get().uri("/metrics").to_request()).await;
    assert_eq!(response.status(), StatusCode::OK);
    let content_type = response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_owned);
    assert_eq!(content_type.as_deref(), Some("text/plain; version=0.0.4; charset=utf-8"));
    String::from_utf8(atest::read_body(response).await.to_vec()).expect("utf-8")
}

fn assert_error(result: &(StatusCode, HeaderMap, Vec<u8>), status: u16, code: &str) {
    let (s, headers, body) = result;
    assert_eq!(s.as_u16(), status, "{}", String::from_utf8_lossy(body));
    assert_eq!(headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()), Some("application/json"));
    assert_eq!(headers.get(header::CACHE_CONTROL).and_then(|v| v.to_str().ok()), Some("no-store"));
    let json: Value = serde_json::from_slice(body).expect("json body");
    assert_eq!(json["error"], code, "{json}");
}

fn post_token(content_type: Option<&str>, body: impl Into<Vec<u8>>) -> atest::TestRequest {
    post_to("/token", content_type, body)
}

fn post_to(path: &str, content_type: Option<&str>, body: impl Into<Vec<u8>>) -> atest::TestRequest {
    let mut req = atest::TestRequest::post().uri(path);
    if let Some(ct) = content_type {
        req = req.insert_header((header::CONTENT_TYPE, ct));
    }
    req.set_payload(body.into())
}

#[actix_rt::test]
async fn unknown_paths_are_json_404() {
    for path in ["/", "/nope", "/token/", "/TOKEN", "/health/x", "/.well-known/jwks.json/x"] {
        let (status, headers, body) = call(atest::TestRequest::get().uri(path)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(body, br#"{"error":"not_found"}"#);
        assert_eq!(headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()), Some("application/json"));
    }
    let result = call(atest::TestRequest::post().uri("/login")).await;
    assert_eq!(result.0, StatusCode::NOT_FOUND);
}

#[actix_rt::test]
async fn wrong_methods_are_405_with_allow() {
    for (method, path, allow) in test_support::wrong_method_cases() {
        let req = atest::TestRequest::default()
            .method(method.parse().expect("method"))
            .uri(path)
            .insert_header((header::CONTENT_TYPE, "application/json"))
            .set_payload(r#"{"username":"a","password":"b"}"#);
        let result = call(req).await;
        assert_error(&result, 405, "invalid_request");
        assert_eq!(result.1.get(header::ALLOW).and_then(|v| v.to_str().ok()), Some(allow), "{method} {path}");
    }
}

#[actix_rt::test]
async fn unknown_paths_are_404_for_every_method() {
    for method in METHODS {
        for path in ["/nope", "/token/", "/revoke/", "/health/live/x", "/metrics", "/metrics/"] {
            let req = atest::TestRequest::default().method(method.parse().expect("method")).uri(path);
            let (status, headers, body) = call(req).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}");
            assert_eq!(body, br#"{"error":"not_found"}"#, "{method} {path}");
            assert_eq!(headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()), Some("application/json"));
        }
    }
}

#[actix_rt::test]
async fn head_answers_like_get() {
    for path in READ_ONLY_PATHS {
        let (get_status, get_headers, _) = call(atest::TestRequest::get().uri(path)).await;
        let (head_status, head_headers, _) =
            call(atest::TestRequest::default().method(actix_web::http::Method::HEAD).uri(path)).await;
        assert_eq!(head_status, get_status, "{path}");
        for name in [header::CONTENT_TYPE, header::CACHE_CONTROL] {
            assert_eq!(head_headers.get(&name), get_headers.get(&name), "{path} {name}");
        }
    }
}

#[actix_rt::test]
async fn logins_move_their_counters_and_metrics_are_prometheus_text_on_the_metrics_port() {
    let state = state();
    let app = atest::init_service(App::new().app_data(state.clone()).configure(handlers::routes)).await;
    let john = br#"{"username":"john@example.com","password":"TopSecret0!"}"#.to_vec();
    // The database is down here: one 503 login, one 415.
    let r = atest::call_service(&app, post_token(Some("application/json"), john.clone()).to_request()).await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    let r = atest::call_service(&app, post_token(Some("text/plain"), john).to_request()).await;
    assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let response = atest::call_service(&app, atest::TestRequest::get().uri("/metrics").to_request()).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND, "not on the public port");
    let text = scrape(state).await;
    assert_lines(
        &text,
        &[
            r#"simpleauth_token_requests_total{error="temporarily_unavailable",status="503"} 1"#,
            r#"simpleauth_token_requests_total{error="invalid_request",status="415"} 1"#,
            r#"simpleauth_token_requests_total{error="none",status="200"} 0"#,
            "simpleauth_token_request_duration_seconds_count 2",
            "simpleauth_db_pool_max 10",
        ],
    );
    test_support::assert_metric_families(&text);
}

#[actix_rt::test]
async fn liveness_never_asks_the_database() {
    // The test pool points at a closed port: /health is down, /health/live is up.
    let (status, headers, body) = call(atest::TestRequest::get().uri("/health/live")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, br#"{"status":"up"}"#);
    assert_eq!(headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()), Some("application/json"));
    assert_eq!(headers.get(header::CACHE_CONTROL).and_then(|v| v.to_str().ok()), Some("no-store"));
}

/// Through a real server and socket, so actix's HTTP/1.1 codec is part of the
/// test: custom method tokens, bodies (chunked or not) on 405/404 answers, and
/// HEAD answers without a body.
mod over_the_wire {
    use actix_web::{App, HttpServer};

    use super::*;

    /// A one-worker server with `configure`'s routes on a free port: its port and the handle that stops it.
    fn serve(configure: fn(&mut actix_web::web::ServiceConfig)) -> (u16, actix_web::dev::ServerHandle) {
        let state = state();
        let server = HttpServer::new(move || App::new().app_data(state.clone()).configure(configure))
            .workers(1)
            .disable_signals()
            .bind(("127.0.0.1", 0))
            .expect("bind");
        let port = server.addrs()[0].port();
        let server = server.run();
        let handle = server.handle();
        actix_rt::spawn(server);
        (port, handle)
    }

    #[actix_rt::test]
    async fn every_method_gets_the_contracts_answer() {
        let (port, handle) = serve(handlers::routes);

        let checks =
            actix_web::web::block(move || test_support::method_table_failures(port, &["/nope", "/metrics"], true))
                .await
                .expect("client thread");
        handle.stop(false).await;
        assert!(checks.is_empty(), "{}", checks.join("\n"));
    }

    #[actix_rt::test]
    async fn the_metrics_port_serves_get_metrics_alone() {
        let (port, handle) = serve(handlers::metrics_routes);

        let others = ["/", "/token", "/revoke", "/health", "/health/live", "/.well-known/jwks.json", "/metrics/"];
        let checks = actix_web::web::block(move || test_support::metrics_port_failures(port, &others, true))
            .await
            .expect("client thread");
        handle.stop(false).await;
        assert!(checks.is_empty(), "{}", checks.join("\n"));
    }
}

#[actix_rt::test]
async fn jwks_is_served_with_cache_headers() {
    let (status, headers, body) = call(atest::TestRequest::get().uri("/.well-known/jwks.json")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers.get(header::CACHE_CONTROL).and_then(|v| v.to_str().ok()), Some("public, max-age=300"));
    assert_eq!(headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()), Some("application/json"));
    test_support::assert_jwks(&body);
}

#[actix_rt::test]
async fn discovery_is_served_with_cache_headers() {
    let (status, headers, body) = call(atest::TestRequest::get().uri("/.well-known/openid-configuration")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers.get(header::CACHE_CONTROL).and_then(|v| v.to_str().ok()), Some("public, max-age=300"));
    assert_eq!(headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()), Some("application/json"));
    test_support::assert_discovery(&body);
}

#[actix_rt::test]
async fn a_bad_client_id_is_400_before_the_database_is_asked() {
    // The database is down here: a request that got past the checks would be a 503.
    for body in BAD_CLIENT_ID_JSON {
        let result = call(post_token(Some("application/json"), body.to_vec())).await;
        assert_error(&result, 400, "invalid_request");
    }
    let long = format!("grant_type=password&username=a&password=b&client_id={}", "c".repeat(129));
    for form in ["grant_type=password&username=a&password=b&client_id=x&client_id=x", long.as_str()] {
        assert_error(&call(post_token(Some("application/x-www-form-urlencoded"), form)).await, 400, "invalid_request");
    }
    let good = "grant_type=password&username=a&password=b&client_id=web";
    assert_error(
        &call(post_token(Some("application/x-www-form-urlencoded"), good)).await,
        503,
        "temporarily_unavailable",
    );
}

#[actix_rt::test]
async fn content_type_is_checked_first() {
    for ct in UNSUPPORTED_CONTENT_TYPES {
        assert_error(&call(post_token(ct, "{}")).await, 415, "invalid_request");
    }
}

#[actix_rt::test]
async fn bodies_over_8192_bytes_are_413_and_exactly_8192_is_read() {
    let big = vec![b' '; 8193];
    assert_error(&call(post_token(Some("application/json"), big)).await, 413, "invalid_request");
    // 8192 bytes of a JSON array: read in full, then refused as not an object (400, not 413).
    let mut exact = vec![b' '; 8192];
    exact[0] = b'[';
    exact[8191] = b']';
    assert_error(&call(post_token(Some("application/json"), exact)).await, 400, "invalid_request");
}

#[actix_rt::test]
async fn json_and_form_validation_errors() {
    for body in [&b"{"[..], b"[]", b"null", b"42", b"", br#"{"username":"a@b"}"#, br#"{"username":5,"password":"x"}"#] {
        assert_error(&call(post_token(Some("application/json"), body.to_vec())).await, 400, "invalid_request");
    }
    let unsupported = br#"{"username":"a@b","password":"x","grant_type":"client_credentials"}"#;
    assert_error(
        &call(post_token(Some("Application/JSON; charset=utf-8"), unsupported.to_vec())).await,
        400,
        "unsupported_grant_type",
    );
    let repeated = "grant_type=password&username=a%40b&username=c%40d&password=x";
    assert_error(&call(post_token(Some("application/x-www-form-urlencoded"), repeated)).await, 400, "invalid_request");
}

#[actix_rt::test]
async fn database_down_is_503_with_retry_after() {
    let result =
        call(post_token(Some("application/json"), br#"{"username":"john@example.com","password":"x"}"#.to_vec())).await;
    assert_error(&result, 503, "temporarily_unavailable");
    assert_eq!(result.1.get(header::RETRY_AFTER).and_then(|v| v.to_str().ok()), Some("1"));

    let (status, _, body) = call(atest::TestRequest::get().uri("/health")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(body, br#"{"status":"down"}"#);
}

#[actix_rt::test]
async fn a_malformed_refresh_token_is_invalid_grant_without_the_database() {
    // The database is down here: a token that reached it would be a 503.
    let v = test_vectors::vectors();
    for entry in v["refresh_tokens"]["malformed"].as_array().expect("malformed") {
        let token = entry["token"].as_str().expect("token");
        let (status, headers, body) = call(post_token(Some("application/json"), json_refresh(token))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{}", entry["name"]);
        assert_eq!(body, INVALID_REFRESH_TOKEN, "{}", entry["name"]);
        assert_eq!(headers.get(header::CACHE_CONTROL).and_then(|v| v.to_str().ok()), Some("no-store"));
    }
    let form = "grant_type=refresh_token&refresh_token=too-short&client_id=web";
    let (status, _, body) = call(post_token(Some("application/x-www-form-urlencoded"), form)).await;
    assert_eq!((status, body.as_slice()), (StatusCode::BAD_REQUEST, INVALID_REFRESH_TOKEN));
}

#[actix_rt::test]
async fn a_well_formed_refresh_token_asks_the_database() {
    let result = call(post_token(Some("application/json"), json_refresh(REFRESH_TOKEN))).await;
    assert_error(&result, 503, "temporarily_unavailable");
    assert_eq!(result.1.get(header::RETRY_AFTER).and_then(|v| v.to_str().ok()), Some("1"));
    let form = format!("grant_type=refresh_token&refresh_token={REFRESH_TOKEN}");
    assert_error(
        &call(post_token(Some("application/x-www-form-urlencoded"), form)).await,
        503,
        "temporarily_unavailable",
    );
    // A bad client_id is still a 400 before anything else.
    let body = format!(r#"{{"grant_type":"refresh_token","refresh_token":"{REFRESH_TOKEN}","client_id":""}}"#);
    assert_error(&call(post_token(Some("application/json"), body)).await, 400, "invalid_request");
}

#[actix_rt::test]
async fn revoke_answers_200_empty_for_any_string_and_asks_the_database_only_for_a_token() {
    for (content_type, body) in REVOKE_WITHOUT_A_LOOKUP {
        let (status, headers, body) = call(post_to("/revoke", Some(content_type), body)).await;
        assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
        assert!(body.is_empty());
        assert_eq!(headers.get(header::CACHE_CONTROL).and_then(|v| v.to_str().ok()), Some("no-store"));
    }
    // A well-formed token is looked up: the database is down, so 503.
    let form = format!("token={REFRESH_TOKEN}");
    let result = call(post_to("/revoke", Some("application/x-www-form-urlencoded"), form)).await;
    assert_error(&result, 503, "temporarily_unavailable");
    assert_eq!(result.1.get(header::RETRY_AFTER).and_then(|v| v.to_str().ok()), Some("1"));
}

#[actix_rt::test]
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

#[actix_rt::test]
async fn a_locked_address_is_429_before_the_database_and_counted() {
    let state = state_with(&[("LOGIN_IP_MAX_FAILURES", "2"), ("LOGIN_FAILURE_WINDOW_SECONDS", "60")]);
    let locked: std::net::SocketAddr = "192.0.2.7:40000".parse().expect("addr");
    let now = std::time::Instant::now();
    for _ in 0..2 {
        let _ = state.tokens.addresses.reserve(locked.ip(), now).expect("reserved");
    }
    let app = atest::init_service(App::new().app_data(state.clone()).configure(handlers::routes)).await;
    let login = br#"{"username":"john@example.com","password":"TopSecret0!"}"#.to_vec();
    let response =
        atest::call_service(&app, post_token(Some("application/json"), login.clone()).peer_addr(locked).to_request())
            .await;
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after = response.headers().get(header::RETRY_AFTER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let retry_after: u64 = retry_after.expect("Retry-After").parse().expect("seconds");
    assert!((59..=60).contains(&retry_after), "{retry_after}");
    assert_eq!(response.headers().get(header::CACHE_CONTROL).and_then(|v| v.to_str().ok()), Some("no-store"));
    assert_eq!(
        atest::read_body(response).await.as_ref(),
        br#"{"error":"temporarily_unavailable","error_description":"too many failed logins; try again later"}"#
    );
    // Another address goes on to the database (down: 503); a refresh is never limited.
    let other: std::net::SocketAddr = "192.0.2.8:40000".parse().expect("addr");
    let r = atest::call_service(&app, post_token(Some("application/json"), login).peer_addr(other).to_request()).await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    let r = atest::call_service(
        &app,
        post_token(Some("application/json"), json_refresh(REFRESH_TOKEN)).peer_addr(locked).to_request(),
    )
    .await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    // A bad request from the locked address is still a 400: validation comes first.
    let r = atest::call_service(&app, post_token(Some("application/json"), "{}").peer_addr(locked).to_request()).await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);

    assert_lines(&scrape(state).await, &ADDRESS_LOCK_METRIC_LINES);
}

#[actix_rt::test]
async fn x_forwarded_for_names_the_address_only_behind_a_trusted_proxy() {
    let client: std::net::IpAddr = "203.0.113.9".parse().expect("ip");
    let proxy: std::net::SocketAddr = "10.1.1.1:5000".parse().expect("addr");
    let outsider: std::net::SocketAddr = "198.51.100.1:5000".parse().expect("addr");
    for (peer, fields, locked) in [
        // The nearest untrusted hop: the client, past a trusted one, over two header fields.
        (proxy, &["203.0.113.9"][..], true),
        (proxy, &["192.0.2.1, 203.0.113.9", "10.2.2.2"], true),
        (proxy, &["203.0.113.9, 192.0.2.1"], false),
        // Not an address: the walk stops at the peer.
        (proxy, &["203.0.113.9, unknown"], false),
        // An untrusted peer's header is not read.
        (outsider, &["203.0.113.9"], false),
    ] {
        let state = state_with(&[("LOGIN_IP_MAX_FAILURES", "1"), ("TRUSTED_PROXIES", "10.0.0.0/8")]);
        let _ = state.tokens.addresses.reserve(client, std::time::Instant::now()).expect("reserved");
        let mut request = post_token(Some("application/json"), r#"{"username":"a@b","password":"x"}"#).peer_addr(peer);
        for field in fields {
            request = request.append_header(("X-Forwarded-For", *field));
        }
        let (status, _, _) = call_with(state, request.insert_header(("Fly-Client-IP", "203.0.113.9"))).await;
        let expected = if locked { StatusCode::TOO_MANY_REQUESTS } else { StatusCode::SERVICE_UNAVAILABLE };
        assert_eq!(status, expected, "peer {peer} X-Forwarded-For {fields:?}");
    }
}

#[actix_rt::test]
async fn one_ipv6_slash_64_is_one_client() {
    let state = state_with(&[("LOGIN_IP_MAX_FAILURES", "1")]);
    let _ = state.tokens.addresses.reserve("2001:db8:1:2::1".parse().expect("ip"), std::time::Instant::now());
    let app = atest::init_service(App::new().app_data(state).configure(handlers::routes)).await;
    let login = r#"{"username":"a@b","password":"x"}"#;
    for (peer, expected) in [
        ("[2001:db8:1:2:ffff::9]:4000", StatusCode::TOO_MANY_REQUESTS),
        ("[2001:db8:1:3::1]:4000", StatusCode::SERVICE_UNAVAILABLE),
    ] {
        let peer: std::net::SocketAddr = peer.parse().expect("addr");
        let response =
            atest::call_service(&app, post_token(Some("application/json"), login).peer_addr(peer).to_request()).await;
        assert_eq!(response.status(), expected, "{peer}");
    }
}
