//! `TokenRequest`: the credentials of a `POST /token`, read from a JSON or a
//! form body and checked against the contract's limits.

use std::borrow::Cow;

use percent_encoding::percent_decode;
use serde_json::Value;

use crate::errors::ApiError;

pub const MAX_USERNAME_CHARS: usize = 254;
pub const MAX_PASSWORD_BYTES: usize = 1024;
pub const MAX_CLIENT_ID_CHARS: usize = 128;

#[derive(Debug, PartialEq, Eq)]
pub struct TokenRequest {
    pub username: String,
    pub password: String,
    /// The client named by the request, if it names one (RFC 6749 §2.2).
    pub client_id: Option<String>,
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

impl TokenRequest {
    /// A JSON body: one object with string `username` and `password`, an
    /// optional string `grant_type` that must be `password` and an optional
    /// string `client_id`. Other members are ignored.
    pub fn from_json(body: &[u8]) -> Result<Self, ApiError> {
        let value: Value =
            serde_json::from_slice(body).map_err(|_| ApiError::InvalidRequest("the body is not valid JSON"))?;
        let Value::Object(mut object) = value else {
            return Err(ApiError::InvalidRequest("the body must be a JSON object"));
        };
        match object.get("grant_type") {
            None => {}
            Some(Value::String(grant_type)) if grant_type == "password" => {}
            Some(Value::String(_)) => return Err(ApiError::UnsupportedGrantType),
            Some(_) => return Err(ApiError::InvalidRequest("grant_type must be a string")),
        }
        let mut take = |name: &str, problem: &'static str| match object.remove(name) {
            Some(Value::String(s)) => Ok(s),
            _ => Err(ApiError::InvalidRequest(problem)),
        };
        let username = take("username", "username is required and must be a string")?;
        let password = take("password", "password is required and must be a string")?;
        let client_id = match object.remove("client_id") {
            None => None,
            Some(Value::String(client_id)) => Some(client_id),
            Some(_) => return Err(ApiError::InvalidRequest("client_id must be a string")),
        };
        validate(username, password, client_id)
    }

    /// A form body (RFC 6749 §4.3): `grant_type`, `username` and `password`
    /// required, `client_id` optional, each at most once (§3.2); other
    /// parameters are ignored.
    /// Decoding is strict: percent-escapes that decode to invalid UTF-8 are a 400,
    /// not silently replaced.
    pub fn from_form(body: &[u8]) -> Result<Self, ApiError> {
        let mut grant_type: Option<String> = None;
        let mut username: Option<String> = None;
        let mut password: Option<String> = None;
        let mut client_id: Option<String> = None;
        for pair in body.split(|b| *b == b'&').filter(|p| !p.is_empty()) {
            let (raw_name, raw_value) = match pair.iter().position(|b| *b == b'=') {
                Some(i) => (&pair[..i], &pair[i + 1..]),
                None => (pair, &b""[..]),
            };
            let slot = match form_decode(raw_name)?.as_ref() {
                "grant_type" => &mut grant_type,
                "username" => &mut username,
                "password" => &mut password,
                "client_id" => &mut client_id,
                _ => continue,
            };
            if slot.is_some() {
                return Err(ApiError::InvalidRequest(
                    "grant_type, username, password and client_id may each be given only once",
                ));
            }
            *slot = Some(form_decode(raw_value)?.into_owned());
        }
        match grant_type.as_deref() {
            None | Some("") => return Err(ApiError::InvalidRequest("grant_type is required")),
            Some("password") => {}
            Some(_) => return Err(ApiError::UnsupportedGrantType),
        }
        let username = username.ok_or(ApiError::InvalidRequest("username is required"))?;
        let password = password.ok_or(ApiError::InvalidRequest("password is required"))?;
        validate(username, password, client_id)
    }
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

fn validate(username: String, password: String, client_id: Option<String>) -> Result<TokenRequest, ApiError> {
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
    if let Some(problem) = client_id.as_deref().and_then(client_id_problem) {
        return Err(ApiError::InvalidRequest(problem));
    }
    Ok(TokenRequest { username, password, client_id })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_rules_of_the_spec() {
        let ok = TokenRequest::from_json(
            br#"{"username":"john@example.com","password":"TopSecret0!","grant_type":"password","x":[1]}"#,
        );
        let expected =
            TokenRequest { username: "john@example.com".into(), password: "TopSecret0!".into(), client_id: None };
        assert_eq!(ok.ok(), Some(expected));
        let escaped = TokenRequest::from_json(br#"{"username":"john@example.com","password":"TopSecret0\u0021"}"#)
            .expect("valid");
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
            let err = TokenRequest::from_json(body).expect_err(&String::from_utf8_lossy(body));
            assert_eq!(err.code(), code, "{}", String::from_utf8_lossy(body));
        }
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
        let expected = TokenRequest {
            username: "john@example.com".into(),
            password: "Top Secret!".into(),
            client_id: Some("web".into()),
        };
        assert_eq!(ok.ok(), Some(expected));
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
            let err = TokenRequest::from_form(body).expect_err(&String::from_utf8_lossy(body));
            assert_eq!(err.code(), code, "{}", String::from_utf8_lossy(body));
        }
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
}
