//! Handler and error-mapping tests through actix's test service. No database
//! runs here: the pool points at a closed port, which also exercises the 503
//! path. Paths that need real users are covered by spec/conformance.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderMap};
use actix_web::{App, test as atest, web};
use serde_json::Value;

use crate::config::Config;
use crate::db::{self, UserRepository};
use crate::errors::ApiError;
use crate::handlers::{self, AppState, TokenRequest, parse_form, parse_json};
use crate::passwords::PasswordVerifier;
use crate::test_vectors::dev_key_pem;
use crate::tokens::TokenSigner;

const INVALID_GRANT: &[u8] = br#"{"error":"invalid_grant","error_description":"invalid username or password"}"#;

fn state() -> web::Data<AppState> {
    let config = Config::from_lookup(|name| match name {
        // Port 1 on loopback: nothing listens, connecting fails at once.
        "DATABASE_URL" => Some("postgres://auth:auth@127.0.0.1:1/auth".into()),
        "JWT_PRIVATE_KEY" => Some("unused here".into()),
        "DB_ACQUIRE_TIMEOUT_MS" => Some("300".into()),
        _ => None,
    })
    .expect("config");
    let pool = db::create_pool(&config).expect("pool");
    let signer = TokenSigner::from_pem(&dev_key_pem(2048), "http://localhost:8080".into(), "channel-api".into(), 600)
        .expect("dev key");
    web::Data::new(AppState::new(UserRepository::new(pool), PasswordVerifier::new(2), signer))
}

async fn call(req: atest::TestRequest) -> (StatusCode, HeaderMap, Vec<u8>) {
    let app = atest::init_service(App::new().app_data(state()).configure(handlers::routes)).await;
    let response = atest::call_service(&app, req.to_request()).await;
    let status = response.status();
    let headers = response.headers().clone();
    let body = atest::read_body(response).await.to_vec();
    (status, headers, body)
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
    let mut req = atest::TestRequest::post().uri("/token");
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
    for (method, path, allow) in [
        ("GET", "/token", "POST"),
        ("PUT", "/token", "POST"),
        ("DELETE", "/token", "POST"),
        ("POST", "/health", "GET"),
        ("PUT", "/.well-known/jwks.json", "GET"),
    ] {
        let req = atest::TestRequest::default().method(method.parse().expect("method")).uri(path);
        let result = call(req).await;
        assert_error(&result, 405, "invalid_request");
        assert_eq!(result.1.get(header::ALLOW).and_then(|v| v.to_str().ok()), Some(allow), "{method} {path}");
    }
}

#[actix_rt::test]
async fn jwks_is_served_with_cache_headers() {
    let (status, headers, body) = call(atest::TestRequest::get().uri("/.well-known/jwks.json")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers.get(header::CACHE_CONTROL).and_then(|v| v.to_str().ok()), Some("public, max-age=300"));
    let jwks: Value = serde_json::from_slice(&body).expect("json");
    let expected = &crate::test_vectors::vectors()["keys"][0]["jwk"];
    assert_eq!(jwks["keys"][0], *expected);
}

#[actix_rt::test]
async fn content_type_is_checked_first() {
    for ct in [
        None,
        Some("text/plain"),
        Some("application/jsonx"),
        Some("application"),
        Some("multipart/form-data; boundary=x"),
    ] {
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
    let started = std::time::Instant::now();
    let result =
        call(post_token(Some("application/json"), br#"{"username":"john@example.com","password":"x"}"#.to_vec())).await;
    assert_error(&result, 503, "temporarily_unavailable");
    assert_eq!(result.1.get(header::RETRY_AFTER).and_then(|v| v.to_str().ok()), Some("1"));
    assert!(started.elapsed() < std::time::Duration::from_secs(3));

    let (status, _, body) = call(atest::TestRequest::get().uri("/health")).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(body, br#"{"status":"down"}"#);
}

#[test]
fn json_rules_of_the_spec() {
    let ok = parse_json(br#"{"username":"john@example.com","password":"TopSecret0!","grant_type":"password","x":[1]}"#);
    assert_eq!(ok.ok(), Some(TokenRequest { username: "john@example.com".into(), password: "TopSecret0!".into() }));
    let escaped = parse_json(br#"{"username":"john@example.com","password":"TopSecret0\u0021"}"#).expect("valid");
    assert_eq!(escaped.password, "TopSecret0!");
    for (body, code) in [
        (&br#"{"username":"a","password":"b","grant_type":5}"#[..], "invalid_request"),
        (br#"{"username":"a","password":"b","grant_type":null}"#, "invalid_request"),
        (br#"{"username":"a","password":"b","grant_type":""}"#, "unsupported_grant_type"),
        (br#"{"username":"a","password":"b","grant_type":"PASSWORD"}"#, "unsupported_grant_type"),
        (br#"{"username":"","password":"b"}"#, "invalid_request"),
        (br#"{"username":"a","password":null}"#, "invalid_request"),
        (br#"{"username":"a","password":true}"#, "invalid_request"),
        (b"{\"username\":\"a\",\"password\":\"Top\xff\xfe\"}", "invalid_request"),
        (br#""john@example.com""#, "invalid_request"),
        (br#"{"username":"john\u0000@example.com","password":"b"}"#, "invalid_request"),
    ] {
        let err = parse_json(body).expect_err(&String::from_utf8_lossy(body));
        assert_eq!(err.code(), code, "{}", String::from_utf8_lossy(body));
    }
}

#[test]
fn limits_count_characters_and_bytes() {
    let user = |n: usize, c: &str| format!(r#"{{"username":"{}","password":"x"}}"#, c.repeat(n));
    assert!(parse_json(user(254, "é").as_bytes()).is_ok());
    assert!(parse_json(user(255, "a").as_bytes()).is_err());
    let pass = |n: usize, c: &str| format!(r#"{{"username":"a","password":"{}"}}"#, c.repeat(n));
    assert!(parse_json(pass(1024, "p").as_bytes()).is_ok());
    assert!(parse_json(pass(1025, "p").as_bytes()).is_err());
    assert!(parse_json(pass(342, "€").as_bytes()).is_err()); // 1026 bytes
}

#[test]
fn form_rules_of_the_spec() {
    let ok = parse_form(
        b"grant_type=password&username=john%40example.com&password=Top+Secret%21&scope=openid&client_id=web",
    );
    assert_eq!(ok.ok(), Some(TokenRequest { username: "john@example.com".into(), password: "Top Secret!".into() }));
    for (body, code) in [
        (&b"username=a&password=b"[..], "invalid_request"),
        (b"grant_type=&username=a&password=b", "invalid_request"),
        (b"grant_type=password&password=b", "invalid_request"),
        (b"grant_type=password&username=a&password=", "invalid_request"),
        (b"grant_type=password&grant_type=password&username=a&password=b", "invalid_request"),
        (b"grant_type=password&username=a&password=b&password=b", "invalid_request"),
        (b"grant_type=refresh_token&username=a&password=b", "unsupported_grant_type"),
        (b"grant_type=password&username=a&password=%FF%FE", "invalid_request"),
        (b"grant_type=password&username=a%00b&password=b", "invalid_request"),
        (b"", "invalid_request"),
    ] {
        let err = parse_form(body).expect_err(&String::from_utf8_lossy(body));
        assert_eq!(err.code(), code, "{}", String::from_utf8_lossy(body));
    }
}

#[test]
fn invalid_grant_bytes_are_fixed() {
    use actix_web::ResponseError;
    use actix_web::body::MessageBody;
    let body = ApiError::InvalidGrant.error_response().into_body().try_into_bytes().map(|b| b.to_vec());
    assert_eq!(body.ok().as_deref(), Some(INVALID_GRANT));
}
