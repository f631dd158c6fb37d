//! Test support for this crate and the front ends' handler tests (feature
//! `test-support`, a dev-dependency there): an `AppState` whose database is
//! never reachable, and a raw HTTP/1.1 client that checks a server's method
//! table over a real socket, so the framework's own codec is part of the test.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use crate::app_state::AppState;
use crate::key_set::{KeyRing, KeySet};
use crate::metrics::Metrics;
use crate::pool::create_pool;
use crate::settings::Settings;
use crate::test_vectors::dev_key_pem;
use crate::token_signer::TokenSigner;

/// The issuer of the test state's tokens and documents.
pub const ISSUER: &str = "http://localhost:8080";

/// Every method the method table is checked with, standard or not.
pub const METHODS: [&str; 10] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "FOO", "QUERY"];

/// The service's parts with `extra` settings and the RSA dev key; the
/// database is never reachable (port 1 on loopback: connecting fails at
/// once), which also exercises the 503 path. `application_name` is the
/// front end's name.
pub fn app_state(extra: &[(&str, &str)], application_name: &str) -> AppState {
    let settings = Settings::from_lookup(|name| match name {
        "DATABASE_URL" => Some("postgres://auth:auth@127.0.0.1:1/auth".into()),
        "JWT_PRIVATE_KEY" => Some("unused here".into()),
        "DB_ACQUIRE_TIMEOUT_MS" => Some("300".into()),
        _ => extra.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string()),
    })
    .expect("settings");
    let pool = create_pool(&settings, application_name).expect("pool");
    let signer =
        TokenSigner::from_pem(&dev_key_pem("rsa-2048"), ISSUER.into(), "channel-api".into(), 600).expect("dev key");
    let keys = Arc::new(KeyRing::new(KeySet::new(signer, &[], ISSUER)));
    AppState::new(pool, keys, &settings, Metrics::new().expect("metrics"), 2)
}

/// An answer read off the socket.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The first answer in `raw`, its body whatever follows the head.
    pub fn parse(raw: &[u8]) -> Response {
        let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("end of headers");
        let head = String::from_utf8_lossy(&raw[..split]).into_owned();
        let mut lines = head.split("\r\n");
        let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|s| s.parse().ok()).expect("status");
        let headers =
            lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())).collect();
        Response { status, headers, body: raw[split + 4..].to_vec() }
    }
}

/// One request on its own connection (`Connection: close`), read to EOF.
/// `half_close`: shut down the sending side after the request (hyper closes
/// a connection at once when it reads EOF mid-request, so axum's tests do not).
pub fn exchange(port: u16, request: &str, half_close: bool) -> Response {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    stream.write_all(request.as_bytes()).expect("write");
    if half_close {
        let _ = stream.shutdown(Shutdown::Write);
    }
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read");
    Response::parse(&raw)
}

/// A request's text: no body, or a JSON body with `Content-Length` or
/// chunked (`(body, true)`).
pub fn request(method: &str, path: &str, body: Option<(&str, bool)>) -> String {
    let mut text = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    match body {
        None => text.push_str("\r\n"),
        Some((body, false)) => {
            text.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len()))
        }
        Some((body, true)) => text.push_str(&format!(
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
            body.len()
        )),
    }
    text
}

/// Every method of `METHODS`, without a body, with a `Content-Length` body
/// and with a chunked one, to every path of the contract's method table on
/// the public port and to each of `unknown_paths` (`/metrics` among them:
/// it is served on METRICS_PORT only): the contract's 404 / 405 (with its `Allow`)
/// as JSON, 200 for GET and HEAD on the read-only paths, HEAD without a
/// body. The POST endpoints proper are left to the handler tests. Blocking:
/// run it off the server's runtime. Returns what was wrong, one line each.
pub fn method_table_failures(port: u16, unknown_paths: &[&str], half_close: bool) -> Vec<String> {
    let credentials = r#"{"username":"a","password":"b"}"#;
    let known = [
        ("/token", Some("POST")),
        ("/revoke", Some("POST")),
        ("/health/live", Some("GET, HEAD")),
        ("/.well-known/jwks.json", Some("GET, HEAD")),
        ("/.well-known/openid-configuration", Some("GET, HEAD")),
    ];
    let paths: Vec<(&str, Option<&str>)> = known.into_iter().chain(unknown_paths.iter().map(|p| (*p, None))).collect();
    let mut failures = Vec::new();
    for method in METHODS {
        for body in [None, Some((credentials, false)), Some((credentials, true))] {
            for &(path, allow) in &paths {
                let expected = match (allow, method) {
                    (None, _) => 404,
                    (Some("POST"), "POST") => continue,
                    (Some("GET, HEAD"), "GET" | "HEAD") => 200,
                    _ => 405,
                };
                let r = exchange(port, &request(method, path, body), half_close);
                let what = format!("{method} {path} body={body:?}");
                if r.status != expected {
                    failures.push(format!("{what}: {} instead of {expected}", r.status));
                    continue;
                }
                if r.header("content-type") != Some("application/json") {
                    failures.push(format!("{what}: content-type {:?}", r.header("content-type")));
                }
                if expected == 405 && r.header("allow") != allow {
                    failures.push(format!("{what}: allow {:?}", r.header("allow")));
                }
                if method == "HEAD" {
                    if !r.body.is_empty() {
                        failures.push(format!("{what}: HEAD answered with a body"));
                    }
                } else {
                    let Ok(json) = serde_json::from_slice::<serde_json::Value>(&r.body) else {
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
}

/// A well-formed refresh token (spec/vectors.json).
pub const REFRESH_TOKEN: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

/// The body of every refused refresh.
pub const INVALID_REFRESH_TOKEN: &[u8] = br#"{"error":"invalid_grant","error_description":"invalid refresh token"}"#;

/// The endpoints of the public port that answer GET and HEAD.
pub const READ_ONLY_PATHS: [&str; 4] =
    ["/health", "/health/live", "/.well-known/jwks.json", "/.well-known/openid-configuration"];

/// Every method of `METHODS` to `/metrics` and to each of `other_paths` on
/// the metrics port: `GET` and `HEAD /metrics` are the Prometheus text (HEAD
/// without a body), everything else the JSON 404. Blocking: run it off the
/// server's runtime. Returns what was wrong, one line each.
pub fn metrics_port_failures(port: u16, other_paths: &[&str], half_close: bool) -> Vec<String> {
    let mut failures = Vec::new();
    for method in METHODS {
        for path in std::iter::once("/metrics").chain(other_paths.iter().copied()) {
            let r = exchange(port, &request(method, path, None), half_close);
            let what = format!("{method} {path} on the metrics port");
            let served = path == "/metrics" && matches!(method, "GET" | "HEAD");
            let (status, content_type) =
                if served { (200, crate::metrics::CONTENT_TYPE) } else { (404, "application/json") };
            if r.status != status || r.header("content-type") != Some(content_type) {
                failures.push(format!("{what}: {} {:?} instead of {status}", r.status, r.header("content-type")));
                continue;
            }
            let body_ok = match (method, served) {
                ("HEAD", _) => r.body.is_empty(),
                (_, true) => String::from_utf8_lossy(&r.body).contains("# TYPE simpleauth_token_requests_total"),
                (_, false) => r.body == br#"{"error":"not_found"}"#,
            };
            if !body_ok {
                failures.push(format!("{what}: body {:?}", String::from_utf8_lossy(&r.body)));
            }
        }
    }
    failures
}

/// Every (method, path, `Allow`) that must be the contract's 405.
pub fn wrong_method_cases() -> Vec<(&'static str, &'static str, &'static str)> {
    let post_only = METHODS.into_iter().filter(|m| *m != "POST").flat_map(|m| [(m, "/token"), (m, "/revoke")]);
    let get_only = READ_ONLY_PATHS
        .into_iter()
        .flat_map(|path| METHODS.into_iter().filter(|m| !matches!(*m, "GET" | "HEAD")).map(move |m| (m, path)));
    post_only.map(|(m, p)| (m, p, "POST")).chain(get_only.map(|(m, p)| (m, p, "GET, HEAD"))).collect()
}

/// A refresh grant's JSON body.
pub fn json_refresh(token: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({"grant_type": "refresh_token", "refresh_token": token})).expect("json")
}

/// Asserts that each of `lines` is a whole line of `text`.
pub fn assert_lines(text: &str, lines: &[&str]) {
    for line in lines {
        assert!(text.lines().any(|l| l == *line), "missing {line:?} in\n{text}");
    }
}

/// Asserts that a `/metrics` text has exactly the contract's families, and
/// that no password was checked (the test database never answers).
pub fn assert_metric_families(text: &str) {
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
    assert!(text.lines().filter(|l| l.starts_with("simpleauth_password_checks_total{")).all(|l| l.ends_with(" 0")));
}

/// Asserts the test state's discovery document (`ISSUER`, the RSA dev key).
pub fn assert_discovery(body: &[u8]) {
    let doc: serde_json::Value = serde_json::from_slice(body).expect("json");
    assert_eq!(doc["issuer"], ISSUER);
    assert_eq!(doc["token_endpoint"], format!("{ISSUER}/token"));
    assert_eq!(doc["jwks_uri"], format!("{ISSUER}/.well-known/jwks.json"));
    assert_eq!(doc["id_token_signing_alg_values_supported"], serde_json::json!(["RS256"]));
    assert_eq!(doc["grant_types_supported"], serde_json::json!(["password", "refresh_token"]));
    assert_eq!(doc["revocation_endpoint"], format!("{ISSUER}/revoke"));
    assert_eq!(doc["revocation_endpoint_auth_methods_supported"], serde_json::json!(["none"]));
    assert_eq!(doc.as_object().map(|o| o.len()), Some(11));
}

/// Asserts the test state's JWK set: the RSA dev key alone.
pub fn assert_jwks(body: &[u8]) {
    let jwks: serde_json::Value = serde_json::from_slice(body).expect("json");
    let expected = crate::test_vectors::key_entry("rsa-2048")["jwk"].clone();
    assert_eq!(jwks, serde_json::json!({ "keys": [expected] }));
}

/// JSON bodies whose `client_id` breaks its rule: 400 before the database.
pub const BAD_CLIENT_ID_JSON: [&[u8]; 4] = [
    br#"{"username":"a@b","password":"x","client_id":null}"#,
    br#"{"username":"a@b","password":"x","client_id":7}"#,
    br#"{"username":"a@b","password":"x","client_id":""}"#,
    br#"{"username":"a@b","password":"x","client_id":"caf\u00e9"}"#,
];

/// `Content-Type`s (or none) that are 415, checked before anything else.
pub const UNSUPPORTED_CONTENT_TYPES: [Option<&str>; 5] =
    [None, Some("text/plain"), Some("application/jsonx"), Some("application"), Some("multipart/form-data; boundary=x")];

/// `/revoke` bodies answered 200 without the database (not a refresh token's shape).
pub const REVOKE_WITHOUT_A_LOOKUP: [(&str, &str); 3] = [
    ("application/json", r#"{"token":"not-a-refresh-token"}"#),
    ("application/json; charset=utf-8", r#"{"token":"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln"}"#),
    ("application/x-www-form-urlencoded", "token=abc&token_type_hint=refresh_token"),
];

/// `/revoke` bodies refused with 400, with their `Content-Type`.
pub const REVOKE_REFUSED: [(&str, &str); 10] = [
    ("application/x-www-form-urlencoded", ""),
    ("application/x-www-form-urlencoded", "token="),
    ("application/x-www-form-urlencoded", "token=a&token=a"),
    ("application/x-www-form-urlencoded", "token_type_hint=refresh_token"),
    ("application/json", "{}"),
    ("application/json", r#"{"token":""}"#),
    ("application/json", r#"{"token":5}"#),
    ("application/json", r#"{"token":null}"#),
    ("application/json", "[]"),
    ("application/json", "{"),
];

/// The `/metrics` lines after two failed logins lock an address, a third is
/// refused 429, and two more from other addresses get the database's 503.
pub const ADDRESS_LOCK_METRIC_LINES: [&str; 6] = [
    r#"simpleauth_rejections_total{reason="address_locked"} 1"#,
    r#"simpleauth_rejections_total{reason="username_locked"} 0"#,
    r#"simpleauth_rejections_total{reason="overload"} 0"#,
    r#"simpleauth_rejections_total{reason="refresh_reuse"} 0"#,
    r#"simpleauth_token_requests_total{error="temporarily_unavailable",status="429"} 1"#,
    r#"simpleauth_token_requests_total{error="temporarily_unavailable",status="503"} 2"#,
];
