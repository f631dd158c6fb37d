"""The methods table (spec/README.md, "Methods"): every method the server can parse, on every kind of path,
with no body, a JSON body with Content-Length and a chunked JSON body, gets the contract's answer — never the
framework's own. Raw HTTP/1.1 over a socket, since HTTP client libraries refuse or rewrite some of these.

The contract's one alternative (spec/README.md, "Methods"; RFC 9110 §9.3.2, §9.3.8): a HEAD or TRACE request
that carries content may instead be refused with 400 invalid_request and the connection closed."""
from __future__ import annotations

import contextlib
import json
import socket
from urllib.parse import urlsplit

import pytest

from helpers import JOHN, SUCCESS_MEMBERS

METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "FOO", "QUERY"]
READ_ONLY = ["/health", "/health/live", "/.well-known/jwks.json", "/.well-known/openid-configuration"]
# /metrics is served on METRICS_PORT only (spec/README.md §3): on the public port it is an unknown path, 404 for every
# method (not 405).
PATHS = ["/token", "/revoke", *READ_ONLY, "/nope", "/token/", "/revoke/", "/metrics"]
BODIES = ["none", "json", "json-chunked"]
PAYLOAD = json.dumps(JOHN).encode()
TIMEOUT = 5.0


def request_bytes(method: str, path: str, body: str, host: str) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n"
    if body == "none":
        return (head + "\r\n").encode()
    if body == "json":
        return (head + f"Content-Type: application/json\r\nContent-Length: {len(PAYLOAD)}\r\n\r\n").encode() + PAYLOAD
    half = len(PAYLOAD) // 2
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (PAYLOAD[:half], PAYLOAD[half:]))
    return (head + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").encode() + chunks + b"0\r\n\r\n"


class Connection:
    """One HTTP/1.1 connection, read by the response's own framing."""

    def __init__(self, host: str, port: int):
        self.sock = socket.create_connection((host, port), timeout=TIMEOUT)
        self.buf = b""

    def _more(self) -> bool:
        chunk = self.sock.recv(65536)
        self.buf += chunk
        return bool(chunk)

    def _take(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._more():
                raise AssertionError(f"connection closed after {len(self.buf)} of {n} body bytes")
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            if not self._more():
                raise AssertionError("connection closed inside a chunked body")
        line, _, self.buf = self.buf.partition(b"\r\n")
        return line

    def response(self, head_request: bool) -> tuple[int, dict[str, str], bytes] | None:
        """(status, headers with lower-case names, body); None if the server closed without answering."""
        while b"\r\n\r\n" not in self.buf:
            try:
                if not self._more():
                    assert not self.buf, f"connection closed inside a response head: {self.buf[:200]!r}"
                    return None
            except ConnectionResetError:
                return None
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        assert status_line.startswith("HTTP/1.1 "), status_line
        status = int(status_line.split(" ", 2)[1])
        headers: dict[str, str] = {}
        for line in lines:
            name, _, value = line.partition(":")
            key = name.strip().lower()
            headers[key] = f"{headers[key]}, {value.strip()}" if key in headers else value.strip()
        if head_request or status in (204, 304) or 100 <= status < 200:
            return status, headers, b""
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = b""
            while size := int(self._line().split(b";")[0], 16):
                body += self._take(size)
                self._take(2)
            while self._line():  # trailers
                pass
            return status, headers, body
        if "content-length" in headers:
            return status, headers, self._take(int(headers["content-length"]))
        while self._more():  # delimited by the end of the connection
            pass
        body, self.buf = self.buf, b""
        return status, headers, body

    def close(self) -> None:
        self.sock.close()


def expected(method: str, path: str, body: str) -> tuple[int, str | None, dict | None, str]:
    """(status, Allow, JSON body or None for 'a token pair', media type) of the contract."""
    if path == "/token":
        if method != "POST":
            return 405, "POST", {"error": "invalid_request"}, "application/json"
        if body == "none":
            return 415, None, {"error": "invalid_request"}, "application/json"
        return 200, None, None, "application/json"
    if path == "/revoke":
        if method != "POST":
            return 405, "POST", {"error": "invalid_request"}, "application/json"
        # The JSON body is a login, with no `token` member.
        return (415, None, {"error": "invalid_request"}, "application/json") if body == "none" else \
            (400, None, {"error": "invalid_request"}, "application/json")
    if path in READ_ONLY:
        if method in ("GET", "HEAD"):
            return 200, None, None, "application/json"
        return 405, "GET, HEAD", {"error": "invalid_request"}, "application/json"
    return 404, None, {"error": "not_found"}, "application/json"


def may_refuse_content(method: str, body: str) -> bool:
    """HEAD or TRACE with content: the contract allows the refusal as well as the table's answer."""
    return method in ("HEAD", "TRACE") and body != "none"


def assert_closed_cleanly(conn: Connection) -> None:
    """The server announced `Connection: close`: it closes with no byte after the answer (no HEAD body)."""
    with contextlib.suppress(ConnectionResetError):
        while conn._more():
            pass
    assert conn.buf == b"", f"bytes after the answer: {conn.buf[:100]!r}"


def assert_content_refusal(conn: Connection, method: str, headers: dict[str, str], payload: bytes) -> None:
    """The alternative answer, exactly: 400 invalid_request with the error headers, Connection: close, then nothing."""
    assert headers.get("content-type", "").split(";")[0].strip().lower() == "application/json", headers
    assert "no-store" in headers.get("cache-control", "").lower(), headers
    assert "allow" not in headers, headers
    assert "close" in headers.get("connection", "").lower(), f"a refused {method} with content must close: {headers}"
    if method == "HEAD":
        assert payload == b""
    else:
        doc = json.loads(payload)
        assert doc.get("error") == "invalid_request" and set(doc) == {"error", "error_description"}, doc
    assert_closed_cleanly(conn)


CASES = [(m, p, b) for p in PATHS for m in METHODS for b in BODIES]


@pytest.mark.parametrize("method,path,body", CASES, ids=[f"{m} {p} {b}" for m, p, b in CASES])
def test_method_table(service, method, path, body):
    u = urlsplit(service.base_url)
    status, allow, error, media = expected(method, path, body)
    conn = Connection(u.hostname, u.port)
    try:
        conn.sock.sendall(request_bytes(method, path, body, u.netloc))
        answer = conn.response(head_request=method == "HEAD")
        assert answer is not None, "the server closed the connection without an answer"
        got, headers, payload = answer
        if got == 400 and may_refuse_content(method, body):
            assert_content_refusal(conn, method, headers, payload)
            return
        assert got == status, f"expected {status}, got {got} {headers} {payload[:200]!r}"
        assert headers.get("content-type", "").split(";")[0].strip().lower() == media, headers
        if allow is not None:
            assert [m.strip() for m in headers.get("allow", "").split(",")] == allow.split(", "), headers.get("allow")
        if status >= 400:
            assert "no-store" in headers.get("cache-control", "").lower() or status == 404, headers
        if method == "HEAD":
            assert payload == b""
        elif error is not None:
            doc = json.loads(payload)
            assert doc.get("error") == error["error"], doc
            assert set(doc) <= {"error", "error_description"} and (status == 404 or "error_description" in doc), doc
            if status == 404:
                assert doc == error
        elif path == "/token":
            assert set(json.loads(payload)) == SUCCESS_MEMBERS
        # The connection still carries a request (the request body was read, and a HEAD answer sent none),
        # unless the server said it would close it or closed it without a stray byte.
        if "close" in headers.get("connection", "").lower():
            assert_closed_cleanly(conn)
            return
        try:
            conn.sock.sendall(b"GET /.well-known/jwks.json HTTP/1.1\r\nHost: " + u.netloc.encode() + b"\r\n\r\n")
            follow = conn.response(head_request=False)
        except (BrokenPipeError, ConnectionResetError):
            follow = None
        if follow is None:
            assert conn.buf == b"", f"stray bytes after the answer: {conn.buf[:100]!r}"
        else:
            assert follow[0] == 200 and b'"keys"' in follow[2], f"the next request on the connection: {follow[0]} {follow[2][:100]!r}"
    finally:
        conn.close()


EXPECT_CASES = [(m, p) for p in ("/token", "/revoke", "/health", "/nope") for m in ("POST", "PUT", "GET")]


@pytest.mark.parametrize("method,path", EXPECT_CASES, ids=[f"{m} {p}" for m, p in EXPECT_CASES])
def test_expect_100_continue(service, method, path):
    """A client that sends `Expect: 100-continue` (curl for large bodies, .NET's and Java's HttpClient when told to)
    holds its body back until the server asks for it. The server answers at once, with a 100 or, when the request
    line and headers decide it, with the final status (RFC 9110 §10.1.1); either way the table's answer follows. A
    server that sends neither leaves such a login waiting out the client's own expect timeout (curl's: 1 s) — here
    the connection's timeout, a hang detector."""
    u = urlsplit(service.base_url)
    status, _, error, _ = expected(method, path, "json")
    conn = Connection(u.hostname, u.port)
    try:
        conn.sock.sendall((f"{method} {path} HTTP/1.1\r\nHost: {u.netloc}\r\nContent-Type: application/json\r\n"
                           f"Content-Length: {len(PAYLOAD)}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n")
                          .encode())
        answer = conn.response(head_request=False)
        assert answer is not None, "the server closed the connection without an answer"
        if answer[0] == 100:
            conn.sock.sendall(PAYLOAD)
            answer = conn.response(head_request=False)
            assert answer is not None, "the server closed the connection after its 100 without an answer"
        got, headers, payload = answer
        assert got == status, f"expected {status}, got {got} {headers} {payload[:200]!r}"
        if error is not None:
            assert json.loads(payload).get("error") == error["error"], payload[:200]
        elif path == "/token":
            assert set(json.loads(payload)) == SUCCESS_MEMBERS
    finally:
        conn.close()
