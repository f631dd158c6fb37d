"""POST /token, the error rows of the contract and spec/README.md."""
from __future__ import annotations

import http.client
import json
import socket
import threading
from urllib.parse import urlsplit

import pytest

from helpers import INVALID_GRANT_BODY, JANE, JOHN, assert_error, assert_sent_with_its_length

JSON = {"Content-Type": "application/json"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def post(http, service, body: bytes | str, headers: dict):
    return http.post(service.url("/token"), data=body, headers=headers, timeout=10)


# --------------------------------------------------------------------------- 400 invalid_request, JSON

@pytest.mark.parametrize("body", [
    b"{",
    b"not json",
    b'{"username":"john@example.com","password":"TopSecret0!"',
    b'{"username":"john@example.com" "password":"x"}',
    b"",
    b"[]",
    b'["john@example.com","TopSecret0!"]',
    b"null",
    b'"john@example.com"',
    b"42",
], ids=["open-brace", "text", "unterminated", "missing-comma", "empty", "empty-array", "array", "null", "string",
        "number"])
def test_json_that_is_not_an_object(http, service, body):
    assert_error(post(http, service, body, JSON), 400, "invalid_request")


@pytest.mark.parametrize("body", [
    {"password": "TopSecret0!"},
    {"username": "john@example.com"},
    {},
    {"username": "", "password": "TopSecret0!"},
    {"username": "john@example.com", "password": ""},
    {"username": None, "password": "TopSecret0!"},
    {"username": "john@example.com", "password": None},
    {"username": 42, "password": "TopSecret0!"},
    {"username": "john@example.com", "password": 12345},
    {"username": ["john@example.com"], "password": "TopSecret0!"},
    {"username": {"email": "john@example.com"}, "password": "TopSecret0!"},
    {"username": "john@example.com", "password": True},
], ids=["no-username", "no-password", "empty-object", "empty-username", "empty-password", "null-username",
        "null-password", "number-username", "number-password", "array-username", "object-username", "bool-password"])
def test_json_missing_empty_or_mistyped_fields(http, service, body):
    assert_error(post(http, service, json.dumps(body), JSON), 400, "invalid_request")


def test_username_over_254_characters(http, service):
    username = "a" * 243 + "@example.com"  # 255 characters
    assert len(username) == 255
    assert_error(post(http, service, json.dumps({"username": username, "password": "x"}), JSON), 400, "invalid_request")


@pytest.mark.tls_core
def test_username_of_254_characters_is_checked_not_rejected(http, service):
    username = "a" * 242 + "@example.com"
    assert len(username) == 254
    r = post(http, service, json.dumps({"username": username, "password": "x"}), JSON)
    assert r.status_code == 400 and r.content == INVALID_GRANT_BODY


@pytest.mark.tls_core
def test_username_limit_counts_characters_not_bytes(http, service):
    username = "é" * 242 + "@example.com"  # 254 characters, 496 bytes
    r = post(http, service, json.dumps({"username": username, "password": "x"}, ensure_ascii=False).encode(), JSON)
    assert r.status_code == 400 and r.content == INVALID_GRANT_BODY


def test_password_over_1024_bytes(http, service):
    assert_error(post(http, service, json.dumps({"username": "john@example.com", "password": "p" * 1025}), JSON),
                 400, "invalid_request")


def test_password_limit_counts_utf8_bytes(http, service):
    password = "€" * 342  # 342 characters, 1026 bytes
    body = json.dumps({"username": "john@example.com", "password": password}, ensure_ascii=False).encode()
    assert_error(post(http, service, body, JSON), 400, "invalid_request")


@pytest.mark.tls_core
def test_password_of_1024_bytes_is_checked_not_rejected(http, service):
    r = post(http, service, json.dumps({"username": "john@example.com", "password": "p" * 1024}), JSON)
    assert r.status_code == 400 and r.content == INVALID_GRANT_BODY


@pytest.mark.parametrize("body,headers", [
    (b'{"username":"john\\u0000@example.com","password":"TopSecret0!"}', JSON),
    (b"grant_type=password&username=john%00%40example.com&password=TopSecret0%21", FORM),
], ids=["json", "form"])
def test_nul_in_username(http, service, body, headers):
    assert_error(post(http, service, body, headers), 400, "invalid_request")


def test_invalid_utf8(http, service):
    body = b'{"username":"john@example.com","password":"Top\xff\xfeSecret"}'
    assert_error(post(http, service, body, JSON), 400, "invalid_request")


@pytest.mark.parametrize("grant_type", [5, None, True, ["password"]], ids=["number", "null", "bool", "array"])
def test_json_grant_type_of_the_wrong_type(http, service, grant_type):
    assert_error(post(http, service, json.dumps({**JOHN, "grant_type": grant_type}), JSON), 400, "invalid_request")


@pytest.mark.parametrize("grant_type", ["client_credentials", "authorization_code", "PASSWORD", "REFRESH_TOKEN", ""])
def test_json_unsupported_grant_type(http, service, grant_type):
    assert_error(post(http, service, json.dumps({**JOHN, "grant_type": grant_type}), JSON), 400,
                 "unsupported_grant_type")


# --------------------------------------------------------------------------- 400, form

@pytest.mark.parametrize("body", [
    "username=john%40example.com&password=TopSecret0%21",
    "grant_type=&username=john%40example.com&password=TopSecret0%21",
    "grant_type=password&password=TopSecret0%21",
    "grant_type=password&username=john%40example.com",
    "grant_type=password&username=&password=TopSecret0%21",
    "grant_type=password&username=john%40example.com&password=",
    "",
], ids=["no-grant-type", "empty-grant-type", "no-username", "no-password", "empty-username", "empty-password",
        "empty-body"])
def test_form_missing_or_empty_fields(http, service, body):
    assert_error(post(http, service, body, FORM), 400, "invalid_request")


@pytest.mark.parametrize("body", [
    "grant_type=password&username=john%40example.com&username=x%40example.com&password=TopSecret0%21",
    "grant_type=password&username=john%40example.com&password=TopSecret0%21&password=TopSecret0%21",
    "grant_type=password&grant_type=password&username=john%40example.com&password=TopSecret0%21",
], ids=["username", "password", "grant_type"])
def test_form_repeated_parameter(http, service, body):
    assert_error(post(http, service, body, FORM), 400, "invalid_request")


@pytest.mark.parametrize("grant_type", ["client_credentials", "authorization_code", "REFRESH_TOKEN", "PASSWORD"])
def test_form_unsupported_grant_type(http, service, grant_type):
    body = f"grant_type={grant_type}&username=john%40example.com&password=TopSecret0%21"
    assert_error(post(http, service, body, FORM), 400, "unsupported_grant_type")


def test_form_password_over_1024_bytes(http, service):
    body = "grant_type=password&username=john%40example.com&password=" + "p" * 1025
    assert_error(post(http, service, body, FORM), 400, "invalid_request")


# --------------------------------------------------------------------------- 400 invalid_grant

@pytest.mark.tls_core
@pytest.mark.parametrize("credentials", [
    {"username": "john@example.com", "password": "TopSecret0?"},
    {"username": "john@example.com", "password": "topsecret0!"},
    {"username": "jane@example.com", "password": "CorrectHorse9?"},
    {"username": "nobody@example.com", "password": "TopSecret0!"},
    {"username": "broken@example.com", "password": "TopSecret0!"},
    {"username": "legacy7@example.com", "password": "legacy-pass-8"},
    {"username": "not-an-email", "password": "x"},
], ids=["john-wrong", "john-case", "jane-wrong", "unknown", "unusable-hash", "legacy-wrong", "not-an-email"])
def test_invalid_grant_has_exactly_the_same_bytes(http, service, credentials):
    r = post(http, service, json.dumps(credentials), JSON)
    assert_error(r, 400, "invalid_grant")
    assert r.content == INVALID_GRANT_BODY
    assert_sent_with_its_length(r)


@pytest.mark.tls_core
def test_invalid_grant_via_form(http, service):
    r = post(http, service, "grant_type=password&username=john%40example.com&password=wrong", FORM)
    assert_error(r, 400, "invalid_grant")
    assert r.content == INVALID_GRANT_BODY


@pytest.mark.tls_core
def test_unknown_user_and_wrong_password_are_indistinguishable(http, service):
    wrong = post(http, service, json.dumps({**JANE, "password": "nope"}), JSON)
    unknown = post(http, service, json.dumps({"username": "ghost@example.com", "password": "nope"}), JSON)
    assert (wrong.status_code, wrong.content) == (unknown.status_code, unknown.content)
    relevant = ("Content-Type", "Cache-Control", "Pragma", "Content-Length", "Retry-After", "WWW-Authenticate")
    assert {h: wrong.headers.get(h) for h in relevant} == {h: unknown.headers.get(h) for h in relevant}


@pytest.mark.tls_core
def test_wrong_password_does_not_lock_out_the_right_one(http, service):
    for _ in range(3):
        post(http, service, json.dumps({**JOHN, "password": "wrong"}), JSON)
    r = post(http, service, json.dumps(JOHN), JSON)
    assert r.status_code == 200


# --------------------------------------------------------------------------- 413, 415

def test_body_over_8_kib_with_content_length(http, service):
    core = b'{"username":"john@example.com","password":"TopSecret0!"'
    body = core + b" " * (8193 - len(core) - 1) + b"}"
    assert len(body) == 8193
    assert_error(post(http, service, body, JSON), 413, "invalid_request")


def test_large_body(http, service):
    body = json.dumps({**JOHN, "padding": "x" * 1_000_000})
    assert_error(post(http, service, body, JSON), 413, "invalid_request")


def test_an_answer_before_the_end_of_a_large_body_says_whether_the_connection_goes_on(service):
    """A 1 MiB body refused by its Content-Length: the server may read it to its end, so that the connection carries
    the next request, or close the connection after its answer, and then the answer says `Connection: close`.
    Otherwise a client (or a proxy on the way) sends its next request on a connection that is being closed, and that
    request is lost."""
    u = urlsplit(service.base_url)
    body = b" " * (1 << 20)
    head = (b"POST /token HTTP/1.1\r\nHost: " + u.netloc.encode() + b"\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        sent = []

        def send():
            try:
                s.sendall(head + body)
                sent.append(True)
            except OSError:
                pass  # the server stopped reading: its answer says what it did with the connection

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        first = http.client.HTTPResponse(s)
        first.begin()
        assert first.status == 413, first.status
        first.read()
        if "close" in (first.getheader("Connection") or "").lower():
            return
        sender.join(10)
        assert sent, "the body could not be sent to its end, and the answer did not say Connection: close"
        try:
            s.sendall(b"GET /health/live HTTP/1.1\r\nHost: " + u.netloc.encode() + b"\r\n\r\n")
            second = http.client.HTTPResponse(s)
            second.begin()
        except (OSError, http.client.HTTPException) as e:
            pytest.fail(f"the answer did not say Connection: close, and the next request on its connection got "
                        f"no answer: {e!r}")
        assert second.status == 200


def test_chunked_body_over_8_kib(http, service):
    def chunks():
        yield b'{"username":"john@example.com","password":"TopSecret0!","padding":"'
        for _ in range(20):
            yield b"x" * 1024
        yield b'"}'
    r = http.post(service.url("/token"), data=chunks(), headers=JSON, timeout=10)
    assert r.request.headers.get("Transfer-Encoding") == "chunked"
    assert_error(r, 413, "invalid_request")


def test_form_body_over_8_kib(http, service):
    body = "grant_type=password&username=john%40example.com&password=TopSecret0%21&scope=" + "x" * 9000
    assert_error(post(http, service, body, FORM), 413, "invalid_request")


@pytest.mark.parametrize("content_type", ["text/plain", "multipart/form-data; boundary=x", "multipart/form-data",
                                          "application/xml", "application/jsonx", "application"])
def test_other_content_types(http, service, content_type):
    r = post(http, service, b'{"username":"john@example.com","password":"TopSecret0!"}', {"Content-Type": content_type})
    assert_error(r, 415, "invalid_request")


def test_missing_content_type(service):
    # requests always sets a Content-Type for a body, so write the request by hand.
    u = urlsplit(service.base_url)
    body = b'{"username":"john@example.com","password":"TopSecret0!"}'
    raw = (b"POST /token HTTP/1.1\r\nHost: " + u.netloc.encode() + b"\r\nContent-Length: " + str(len(body)).encode()
           + b"\r\nConnection: close\r\n\r\n" + body)
    with socket.create_connection((u.hostname, u.port), timeout=10) as s:
        s.sendall(raw)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.decode().partition(":") for line in head.split(b"\r\n")[1:])}
    assert status == 415, data[:300]
    assert headers.get("content-type", "").split(";")[0].strip().lower() == "application/json"
    assert "no-store" in headers.get("cache-control", "")
    if headers.get("transfer-encoding", "").lower() == "chunked":
        payload = b""
        while True:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            payload, rest = payload + rest[:size], rest[size + 2:]
        rest = payload
    assert json.loads(rest)["error"] == "invalid_request"
