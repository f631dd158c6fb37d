//! `TokenRequest`: a `POST /token` (the password or the refresh grant) and
//! `RevokeRequest`: a `POST /revoke`, read from a JSON or a form body and
//! checked against the contract's rules.
//!
//! The media type first (415), then the body within `MAX_BODY_BYTES` (413,
//! the front end's body limit), then the parse and the field rules (400) —
//! the contract's order of checks. The bodies are parsed by hand rather than
//! through a framework's JSON/form extractors: the contract wants `null`,
//! numbers and objects in a string member told apart from absent members,
//! repeated form parameters refused, and invalid UTF-8 in a percent-escape
//! refused rather than replaced.

use std::borrow::Cow;

use percent_encoding::percent_decode;
use serde_json::{Map, Value};

use crate::api_error::ApiError;

/// Largest accepted request body, in bytes (exactly this much is accepted).
pub const MAX_BODY_BYTES: usize = 8192;
pub const MAX_USERNAME_CHARS: usize = 254;
pub const MAX_PASSWORD_BYTES: usize = 1024;
pub const MAX_CLIENT_ID_CHARS: usize = 128;

#[derive(Debug, PartialEq, Eq)]
pub struct TokenRequest {
    pub grant: Grant,
    /// The client named by the request, if it names one (RFC 6749 §2.2).
    pub client_id: Option<String>,
}

/// What the request presents: a password (RFC 6749 §4.3) or a refresh token (§6).
#[derive(PartialEq, Eq)]
pub enum Grant {
    Password {
        username: String,
        password: String,
    },
    /// The presented value as sent; its shape is checked by `RefreshToken::parse`.
    RefreshToken {
        refresh_token: String,
    },
}

impl std::fmt::Debug for Grant {
    // Neither a password nor a token is ever printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Grant::Password { username, .. } => write!(f, "Password {{ username: {username:?}, .. }}"),
            Grant::RefreshToken { .. } => f.write_str("RefreshToken { .. }"),
        }
    }
}

/// `POST /revoke` (RFC 7009): the token whose family ends. `token_type_hint`
/// and `client_id` are accepted and ignored.
#[derive(PartialEq, Eq)]
pub struct RevokeRequest {
    pub token: String,
}

impl std::fmt::Debug for RevokeRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RevokeRequest { .. }")
    }
}

/// The two encodings a `POST /token` or `/revoke` body may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    Json,
    Form,
}

impl BodyKind {
    /// The media type of `Content-Type` (`None`: absent or not visible
    /// ASCII), matched case-insensitively, parameters such as `charset`
    /// allowed; anything else (or none) is 415.
    pub fn of(content_type: Option<&str>) -> Result<Self, ApiError> {
        let value = content_type.ok_or(ApiError::UnsupportedMediaType)?;
        let media_type = value.split(';').next().unwrap_or("").trim();
        if media_type.eq_ignore_ascii_case("application/json") {
            Ok(BodyKind::Json)
        } else if media_type.eq_ignore_ascii_case("application/x-www-form-urlencoded") {
            Ok(BodyKind::Form)
        } else {
            Err(ApiError::UnsupportedMediaType)
        }
    }
}

/// Whether a `Content-Length` value announces more than `MAX_BODY_BYTES`:
/// then 413 at once, before the body is read.
pub fn announced_too_large(content_length: Option<&str>) -> bool {
    content_length.and_then(|v| v.trim().parse::<u64>().ok()).is_some_and(|length| length > MAX_BODY_BYTES as u64)
}

impl TokenRequest {
    /// A body of `kind`, read whole.
    pub fn parse(kind: BodyKind, body: &[u8]) -> Result<Self, ApiError> {
        match kind {
            BodyKind::Json => TokenRequest::from_json(body),
            BodyKind::Form => TokenRequest::from_form(body),
        }
    }
}

impl RevokeRequest {
    /// A body of `kind`, read whole.
    pub fn parse(kind: BodyKind, body: &[u8]) -> Result<Self, ApiError> {
        match kind {
            BodyKind::Json => RevokeRequest::from_json(body),
            BodyKind::Form => RevokeRequest::from_form(body),
        }
    }
}

/// Why `client_id` breaks the rule (1–128 characters of printable ASCII,
/// `%x20-7E`, RFC 6749 Appendix A's VSCHAR), or `None` when it keeps it.
/// The same rule holds for DEFAULT_CLIENT_ID.
pub fn client_id_problem(client_id: &str) -> Option<&'static str> {
    if client_id.is_empty() {
        Some("client_id must not be empty")
    } else if client_id.len() > MAX_CLIENT_ID_CHARS {
        // Printable ASCII is one byte a character; a longer string is too long either way.
        Some("client_id is longer than 128 characters")
    } else if !client_id.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
        Some("client_id must be printable ASCII (%x20-7E)")
    } else {
        None
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum GrantType {
    Password,
    RefreshToken,
}

fn grant_type(value: &str) -> Result<GrantType, ApiError> {
    match value {
        "password" => Ok(GrantType::Password),
        "refresh_token" => Ok(GrantType::RefreshToken),
        _ => Err(ApiError::UnsupportedGrantType),
    }
}

/// One JSON object, or 400.
fn json_object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    let value: Value =
        serde_json::from_slice(body).map_err(|_| ApiError::InvalidRequest("the body is not valid JSON"))?;
    match value {
        Value::Object(object) => Ok(object),
        _ => Err(ApiError::InvalidRequest("the body must be a JSON object")),
    }
}

impl TokenRequest {
    /// A JSON body: one object with an optional string `grant_type`
    /// (`password`, the default, or `refresh_token`), the grant's string
    /// members (`username` and `password`, or `refresh_token`) and an optional
    /// string `client_id`. Other members are ignored.
    pub fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        let mut object = json_object(body)?;
        let grant_type = match object.get("grant_type") {
            None => GrantType::Password,
            Some(Value::String(value)) => grant_type(value)?,
            Some(_) => return Err(ApiError::InvalidRequest("grant_type must be a string")),
        };
        let mut take = |name: &str, problem: &'static str| match object.remove(name) {
            Some(Value::String(s)) => Ok(s),
            _ => Err(ApiError::InvalidRequest(problem)),
        };
        let grant = match grant_type {
            GrantType::Password => Grant::Password {
                username: take("username", "username is required and must be a string")?,
                password: take("password", "password is required and must be a string")?,
            },
            GrantType::RefreshToken => Grant::RefreshToken {
                refresh_token: take("refresh_token", "refresh_token is required and must be a string")?,
            },
        };
        let client_id = match object.remove("client_id") {
            None => None,
            Some(Value::String(client_id)) => Some(client_id),
            Some(_) => return Err(ApiError::InvalidRequest("client_id must be a string")),
        };
        validate(grant, client_id)
    }

    /// A form body (RFC 6749 §4.3 and §6): `grant_type` required, then
    /// `username` and `password`, or `refresh_token`; `client_id` optional;
    /// each of the grant's parameters at most once (§3.2); other parameters
    /// are ignored. Decoding is strict: percent-escapes that decode to invalid
    /// UTF-8 are a 400, not silently replaced.
    pub fn from_form<'a>(body: &'a [u8]) -> Result<Self, ApiError> {
        let [grant_type_raw, username, password, refresh_token, client_id] =
            form_fields(body, ["grant_type", "username", "password", "refresh_token", "client_id"])?;
        const REPEATED: &str =
            "grant_type, username, password, refresh_token and client_id may each be given only once";
        let once = |field: FormField<'a>| field.once(REPEATED);
        let grant_type = match once(grant_type_raw)?.map(form_decode).transpose()?.as_deref() {
            None | Some("") => return Err(ApiError::InvalidRequest("grant_type is required")),
            Some(value) => grant_type(value)?,
        };
        let decoded = |field: FormField<'a>, problem: &'static str| -> Result<String, ApiError> {
            let raw = once(field)?.ok_or(ApiError::InvalidRequest(problem))?;
            Ok(form_decode(raw)?.into_owned())
        };
        let grant = match grant_type {
            GrantType::Password => Grant::Password {
                username: decoded(username, "username is required")?,
                password: decoded(password, "password is required")?,
            },
            GrantType::RefreshToken => {
                Grant::RefreshToken { refresh_token: decoded(refresh_token, "refresh_token is required")? }
            }
        };
        let client_id = once(client_id)?.map(form_decode).transpose()?.map(Cow::into_owned);
        validate(grant, client_id)
    }
}

impl RevokeRequest {
    /// A JSON body: one object with a string `token`; other members ignored.
    pub fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        match json_object(body)?.remove("token") {
            Some(Value::String(token)) if !token.is_empty() => Ok(RevokeRequest { token }),
            _ => Err(ApiError::InvalidRequest("token is required and must be a non-empty string")),
        }
    }

    /// A form body: `token` exactly once and not empty; other parameters
    /// (`token_type_hint`, `client_id`, …) ignored.
    pub fn from_form(body: &[u8]) -> Result<Self, ApiError> {
        let [token] = form_fields(body, ["token"])?;
        let token = token.once("token may be given only once")?;
        match token.map(form_decode).transpose()? {
            Some(token) if !token.is_empty() => Ok(RevokeRequest { token: token.into_owned() }),
            _ => Err(ApiError::InvalidRequest("token is required and must not be empty")),
        }
    }
}

/// A form parameter's raw (still encoded) value, and whether it came again.
#[derive(Clone, Copy, Default)]
struct FormField<'a> {
    value: Option<&'a [u8]>,
    repeated: bool,
}

impl<'a> FormField<'a> {
    /// The value if given; a 400 naming `repeated` if given more than once.
    fn once(self, repeated: &'static str) -> Result<Option<&'a [u8]>, ApiError> {
        if self.repeated { Err(ApiError::InvalidRequest(repeated)) } else { Ok(self.value) }
    }
}

/// The raw values of `names` in a form body. Every parameter name is decoded
/// (an invalid one is a 400); values are decoded when the caller reads them.
fn form_fields<'a, const N: usize>(body: &'a [u8], names: [&str; N]) -> Result<[FormField<'a>; N], ApiError> {
    let mut fields = [FormField::default(); N];
    for pair in body.split(|b| *b == b'&').filter(|p| !p.is_empty()) {
        let (raw_name, raw_value) = match pair.iter().position(|b| *b == b'=') {
            Some(i) => (&pair[..i], &pair[i + 1..]),
            None => (pair, &b""[..]),
        };
        let name = form_decode(raw_name)?;
        if let Some(i) = names.iter().position(|n| *n == name) {
            let field = &mut fields[i];
            field.repeated |= field.value.is_some();
            field.value = Some(raw_value);
        }
    }
    Ok(fields)
}

fn form_decode(raw: &[u8]) -> Result<Cow<'_, str>, ApiError> {
    let invalid = || ApiError::InvalidRequest("the form body is not valid UTF-8");
    if raw.contains(&b'+') {
        let spaced: Vec<u8> = raw.iter().map(|b| if *b == b'+' { b' ' } else { *b }).collect();
        let decoded: Vec<u8> = percent_decode(&spaced).collect();
        return String::from_utf8(decoded).map(Cow::Owned).map_err(|_| invalid());
    }
    match percent_decode(raw).into() {
        Cow::Borrowed(bytes) => std::str::from_utf8(bytes).map(Cow::Borrowed).map_err(|_| invalid()),
        Cow::Owned(bytes) => String::from_utf8(bytes).map(Cow::Owned).map_err(|_| invalid()),
    }
}

fn validate(grant: Grant, client_id: Option<String>) -> Result<TokenRequest, ApiError> {
    match &grant {
        Grant::Password { username, password } => check_credentials(username, password)?,
        Grant::RefreshToken { refresh_token } => {
            if refresh_token.is_empty() {
                return Err(ApiError::InvalidRequest("refresh_token must not be empty"));
            }
        }
    }
    if let Some(problem) = client_id.as_deref().and_then(client_id_problem) {
        return Err(ApiError::InvalidRequest(problem));
    }
    Ok(TokenRequest { grant, client_id })
}

fn check_credentials(username: &str, password: &str) -> Result<(), ApiError> {
    let chars = username.chars().count();
    if chars == 0 {
        return Err(ApiError::InvalidRequest("username must not be empty"));
    }
    if chars > MAX_USERNAME_CHARS {
        return Err(ApiError::InvalidRequest("username is longer than 254 characters"));
    }
    // PostgreSQL text cannot hold U+0000; the query would fail as a server error.
    if username.contains('\0') {
        return Err(ApiError::InvalidRequest("username must not contain U+0000"));
    }
    if password.is_empty() {
        return Err(ApiError::InvalidRequest("password must not be empty"));
    }
    if password.len() > MAX_PASSWORD_BYTES {
        return Err(ApiError::InvalidRequest("password is longer than 1024 bytes"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn password(username: &str, password: &str, client_id: Option<&str>) -> TokenRequest {
        TokenRequest {
            grant: Grant::Password { username: username.into(), password: password.into() },
            client_id: client_id.map(Into::into),
        }
    }

    fn refresh(token: &str, client_id: Option<&str>) -> TokenRequest {
        TokenRequest {
            grant: Grant::RefreshToken { refresh_token: token.into() },
            client_id: client_id.map(Into::into),
        }
    }

    const TOKEN: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8";

    #[test]
    fn json_rules_of_the_spec() {
        let ok = TokenRequest::from_json(
            br#"{"username":"john@example.com","password":"TopSecret0!","grant_type":"password","x":[1]}"#,
        );
        assert_eq!(ok.ok(), Some(password("john@example.com", "TopSecret0!", None)));
        let escaped = TokenRequest::from_json(br#"{"username":"john@example.com","password":"TopSecret0\u0021"}"#)
            .expect("valid");
        assert_eq!(escaped, password("john@example.com", "TopSecret0!", None));
        for (body, code) in [
            (&br#"{"username":"a","password":"b","grant_type":5}"#[..], "invalid_request"),
            (br#"{"username":"a","password":"b","grant_type":null}"#, "invalid_request"),
            (br#"{"username":"a","password":"b","grant_type":""}"#, "unsupported_grant_type"),
            (br#"{"username":"a","password":"b","grant_type":"PASSWORD"}"#, "unsupported_grant_type"),
            (br#"{"username":"a","password":"b","grant_type":"client_credentials"}"#, "unsupported_grant_type"),
            (br#"{"username":"","password":"b"}"#, "invalid_request"),
            (br#"{"username":"a","password":null}"#, "invalid_request"),
            (br#"{"username":"a","password":true}"#, "invalid_request"),
            (b"{\"username\":\"a\",\"password\":\"Top\xff\xfe\"}", "invalid_request"),
            (br#""john@example.com""#, "invalid_request"),
            (br#"{"username":"john\u0000@example.com","password":"b"}"#, "invalid_request"),
            // A password grant does not fall back to a refresh token.
            (br#"{"refresh_token":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"}"#, "invalid_request"),
        ] {
            let err = TokenRequest::from_json(body).expect_err(&String::from_utf8_lossy(body));
            assert_eq!(err.code(), code, "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn the_refresh_grant_in_json() {
        let body = format!(r#"{{"grant_type":"refresh_token","refresh_token":"{TOKEN}"}}"#);
        assert_eq!(TokenRequest::from_json(body.as_bytes()).expect("valid"), refresh(TOKEN, None));
        // username and password are ignored, whatever their type; the value is kept as sent (shape checked later).
        let body =
            r#"{"grant_type":"refresh_token","refresh_token":"short","username":5,"password":null,"client_id":"web"}"#;
        assert_eq!(TokenRequest::from_json(body.as_bytes()).expect("valid"), refresh("short", Some("web")));
        for body in [
            r#"{"grant_type":"refresh_token"}"#,
            r#"{"grant_type":"refresh_token","refresh_token":""}"#,
            r#"{"grant_type":"refresh_token","refresh_token":null}"#,
            r#"{"grant_type":"refresh_token","refresh_token":42}"#,
            r#"{"grant_type":"refresh_token","refresh_token":["x"]}"#,
            r#"{"grant_type":"refresh_token","refresh_token":{}}"#,
            r#"{"grant_type":"refresh_token","username":"a","password":"b"}"#,
            r#"{"grant_type":"refresh_token","refresh_token":"x","client_id":""}"#,
            r#"{"grant_type":"refresh_token","refresh_token":"x","client_id":7}"#,
        ] {
            let err = TokenRequest::from_json(body.as_bytes()).expect_err(body);
            assert_eq!(err.code(), "invalid_request", "{body}");
        }
        let err = TokenRequest::from_json(br#"{"grant_type":"Refresh_Token","refresh_token":"x"}"#).expect_err("case");
        assert_eq!(err.code(), "unsupported_grant_type");
    }

    #[test]
    fn limits_count_characters_and_bytes() {
        let user = |n: usize, c: &str| format!(r#"{{"username":"{}","password":"x"}}"#, c.repeat(n));
        assert!(TokenRequest::from_json(user(254, "é").as_bytes()).is_ok());
        assert!(TokenRequest::from_json(user(255, "a").as_bytes()).is_err());
        let pass = |n: usize, c: &str| format!(r#"{{"username":"a","password":"{}"}}"#, c.repeat(n));
        assert!(TokenRequest::from_json(pass(1024, "p").as_bytes()).is_ok());
        assert!(TokenRequest::from_json(pass(1025, "p").as_bytes()).is_err());
        assert!(TokenRequest::from_json(pass(342, "€").as_bytes()).is_err()); // 1026 bytes
    }

    #[test]
    fn form_rules_of_the_spec() {
        let ok = TokenRequest::from_form(
            b"grant_type=password&username=john%40example.com&password=Top+Secret%21&scope=openid&client_id=web",
        );
        assert_eq!(ok.ok(), Some(password("john@example.com", "Top Secret!", Some("web"))));
        for (body, code) in [
            (&b"username=a&password=b"[..], "invalid_request"),
            (b"grant_type=&username=a&password=b", "invalid_request"),
            (b"grant_type=password&password=b", "invalid_request"),
            (b"grant_type=password&username=a&password=", "invalid_request"),
            (b"grant_type=password&grant_type=password&username=a&password=b", "invalid_request"),
            (b"grant_type=password&username=a&password=b&password=b", "invalid_request"),
            (b"grant_type=client_credentials&username=a&password=b", "unsupported_grant_type"),
            (b"grant_type=password&username=a&password=%FF%FE", "invalid_request"),
            (b"grant_type=password&username=a%00b&password=b", "invalid_request"),
            (b"", "invalid_request"),
        ] {
            let err = TokenRequest::from_form(body).expect_err(&String::from_utf8_lossy(body));
            assert_eq!(err.code(), code, "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn the_refresh_grant_in_a_form() {
        let body = format!("grant_type=refresh_token&refresh_token={TOKEN}&scope=openid");
        assert_eq!(TokenRequest::from_form(body.as_bytes()).expect("valid"), refresh(TOKEN, None));
        let body = format!("client_id=web&refresh_token={TOKEN}&grant_type=refresh_token&username=a&username=b");
        assert_eq!(TokenRequest::from_form(body.as_bytes()).expect("valid"), refresh(TOKEN, Some("web")));
        let decoded = TokenRequest::from_form(b"grant_type=refresh_token&refresh_token=a+b%2B").expect("valid");
        assert_eq!(decoded, refresh("a b+", None));
        for body in [
            "grant_type=refresh_token",
            "grant_type=refresh_token&refresh_token=",
            "grant_type=refresh_token&refresh_token",
            "grant_type=refresh_token&username=a&password=b",
            "grant_type=refresh_token&refresh_token=x&refresh_token=x",
            "grant_type=refresh_token&refresh_token=x&refresh_token=y",
            "grant_type=refresh_token&grant_type=refresh_token&refresh_token=x",
            "grant_type=refresh_token&refresh_token=%FF",
            "grant_type=refresh_token&refresh_token=x&client_id=",
            "grant_type=refresh_token&refresh_token=x&client_id=a&client_id=a",
            "refresh_token=x",
        ] {
            let err = TokenRequest::from_form(body.as_bytes()).expect_err(body);
            assert_eq!(err.code(), "invalid_request", "{body}");
        }
        let err = TokenRequest::from_form(b"grant_type=refresh&refresh_token=x").expect_err("unsupported");
        assert_eq!(err.code(), "unsupported_grant_type");
    }

    #[test]
    fn revoke_requests_in_both_encodings() {
        let json = format!(r#"{{"token":"{TOKEN}","token_type_hint":"refresh_token","client_id":5}}"#);
        assert_eq!(RevokeRequest::from_json(json.as_bytes()).expect("valid").token, TOKEN);
        assert_eq!(RevokeRequest::from_json(br#"{"token":"not a token"}"#).expect("any string").token, "not a token");
        let form = format!("token={TOKEN}&token_type_hint=refresh_token&client_id=a&client_id=b");
        assert_eq!(RevokeRequest::from_form(form.as_bytes()).expect("valid").token, TOKEN);
        assert_eq!(RevokeRequest::from_form(b"token=a+b%21").expect("decoded").token, "a b!");
        for body in [
            &b"{}"[..],
            br#"{"token":""}"#,
            br#"{"token":null}"#,
            br#"{"token":42}"#,
            br#"{"token":["x"]}"#,
            br#"{"token":{}}"#,
            br#"{"refresh_token":"x"}"#,
            br#"["token"]"#,
            br#""token""#,
            b"null",
            b"{",
            b"",
            b"{\"token\":\"\xff\"}",
        ] {
            let err = RevokeRequest::from_json(body).expect_err(&String::from_utf8_lossy(body));
            assert_eq!(err.code(), "invalid_request", "{}", String::from_utf8_lossy(body));
        }
        for body in [
            &b""[..],
            b"token=",
            b"token",
            b"token_type_hint=refresh_token",
            b"token=a&token=a",
            b"token=a&token=b",
            b"token=%FF",
        ] {
            let err = RevokeRequest::from_form(body).expect_err(&String::from_utf8_lossy(body));
            assert_eq!(err.code(), "invalid_request", "{}", String::from_utf8_lossy(body));
        }
    }

    #[test]
    fn debug_never_shows_secrets() {
        let text = format!("{:?} {:?}", password("u", "hunter2", None), refresh(TOKEN, None));
        assert!(!text.contains("hunter2") && !text.contains(TOKEN), "{text}");
        assert!(!format!("{:?}", RevokeRequest { token: TOKEN.into() }).contains(TOKEN));
    }

    #[test]
    fn client_id_in_json() {
        let body = |client_id: &str| format!(r#"{{"username":"a","password":"b","client_id":{client_id}}}"#);
        let max = format!("\"{}\"", "c".repeat(128));
        for (client_id, expected) in [
            ("\"web-app\"", "web-app"),
            ("\" \"", " "),
            ("\"a~b c!\"", "a~b c!"),
            ("\"\\u0041\"", "A"),
            (max.as_str(), max.trim_matches('"')),
        ] {
            let request = TokenRequest::from_json(body(client_id).as_bytes()).expect(client_id);
            assert_eq!(request.client_id.as_deref(), Some(expected));
        }
        let too_long = format!("\"{}\"", "c".repeat(129));
        for client_id in [
            "null",
            "5",
            "true",
            "{}",
            "[\"a\"]",
            "\"\"",
            too_long.as_str(),
            "\"caf\\u00e9\"",
            "\"a\\tb\"",
            "\"\\u007f\"",
        ] {
            let err = TokenRequest::from_json(body(client_id).as_bytes()).expect_err(client_id);
            assert_eq!(err.code(), "invalid_request", "{client_id}");
        }
        let absent = TokenRequest::from_json(br#"{"username":"a","password":"b"}"#).expect("valid");
        assert_eq!(absent.client_id, None);
    }

    #[test]
    fn client_id_in_a_form() {
        let form = |rest: &str| format!("grant_type=password&username=a&password=b{rest}");
        for (rest, expected) in [
            ("", None),
            ("&client_id=web", Some("web")),
            ("&client_id=my+app%7E", Some("my app~")),
            (&format!("&client_id={}", "c".repeat(128)), Some(&*"c".repeat(128))),
        ] {
            let request = TokenRequest::from_form(form(rest).as_bytes()).expect(rest);
            assert_eq!(request.client_id.as_deref(), expected, "{rest}");
        }
        for rest in [
            "&client_id=",
            "&client_id",
            "&client_id=a&client_id=a",
            "&client_id=a&client_id=b",
            "&client_id=caf%C3%A9",
            "&client_id=a%09b",
            "&client_id=%7F",
            &format!("&client_id={}", "c".repeat(129)),
        ] {
            let err = TokenRequest::from_form(form(rest).as_bytes()).expect_err(rest);
            assert_eq!(err.code(), "invalid_request", "{rest}");
        }
    }

    #[test]
    fn the_media_type_decides_the_encoding() {
        for (value, kind) in [
            ("application/json", Ok(BodyKind::Json)),
            ("Application/JSON; charset=utf-8", Ok(BodyKind::Json)),
            (" application/x-www-form-urlencoded ;charset=UTF-8", Ok(BodyKind::Form)),
            ("text/plain", Err(())),
            ("application/jsonx", Err(())),
            ("", Err(())),
        ] {
            assert_eq!(BodyKind::of(Some(value)).map_err(|_| ()), kind, "{value:?}");
        }
        assert!(matches!(BodyKind::of(None), Err(ApiError::UnsupportedMediaType)));
    }

    #[test]
    fn only_a_length_past_the_limit_is_refused_before_reading() {
        assert!(!announced_too_large(None));
        assert!(!announced_too_large(Some("8192")));
        assert!(!announced_too_large(Some(" 8192 ")));
        assert!(announced_too_large(Some("8193")));
        assert!(!announced_too_large(Some("not a number")), "the body limit still holds while reading");
    }
}
