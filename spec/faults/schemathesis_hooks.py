"""schemathesis extension for the fault suite (loaded through SCHEMATHESIS_HOOKS): the contract's checks.

`unsupported_method_or_content_refusal` is schemathesis's own `unsupported_method` (an undeclared method gets
405 with `Allow`) plus the one alternative the contract allows (spec/README.md, "Methods"; RFC 9110 §9.3.2,
§9.3.8): a HEAD or TRACE request that carries content may be refused with 400 `invalid_request` (JSON error
body for TRACE, no body for HEAD, `Cache-Control: no-store`) and `Connection: close`. Any other answer goes to
the built-in check unchanged.

It also serialises `ast.parse` in the schemathesis process (`serialized` below): see there for why.
"""
from __future__ import annotations

import ast
import functools
import json
import threading

import schemathesis
from schemathesis.specs.openapi.checks import unsupported_method


def serialized(fn):
    """`fn` behind one re-entrant lock: no two threads run it at once.

    CPython 3.11 keeps the AST constructor's recursion depth in per-interpreter state, so two threads building
    ASTs at once can see each other's count (a garbage-collection finaliser run mid-parse lets the other thread
    in) and fail with `SystemError: AST constructor recursion depth mismatch`. schemathesis runs its workers
    (`-w 2`) as threads, and hypothesis parses source with `ast.parse` to describe lambdas in a strategy's
    repr, so one CI run of the fault suite failed with that error after 166 passing cases, the run's exit code
    1 coming from the tool, not from the stack. Re-entrant, because a finaliser run inside a parse may parse.
    """
    lock = threading.RLock()

    @functools.wraps(fn)
    def call(*args, **kwargs):
        with lock:
            return fn(*args, **kwargs)

    call.serialized = True
    return call


ast.parse = serialized(ast.parse)


def _header(response, name: str) -> str:
    return ", ".join(response.headers.get(name, []))


def _carries_content(request) -> bool:
    if request.body:
        return True
    return (int(request.headers.get("Content-Length", "0") or 0) > 0
            or "chunked" in request.headers.get("Transfer-Encoding", "").lower())


def is_content_refusal(response) -> bool:
    """The contract's alternative answer to HEAD or TRACE with content, exactly."""
    request = response.request
    method = (request.method or "").upper()
    if method not in ("HEAD", "TRACE") or not _carries_content(request) or response.status_code != 400:
        return False
    if _header(response, "content-type").split(";")[0].strip().lower() != "application/json":
        return False
    if "no-store" not in _header(response, "cache-control").lower() or "close" not in _header(response, "connection").lower():
        return False
    if method == "HEAD":
        return response.content == b""
    try:
        doc = json.loads(response.content)
    except ValueError:
        return False
    return isinstance(doc, dict) and doc.get("error") == "invalid_request" and set(doc) == {"error", "error_description"}


@schemathesis.check
def unsupported_method_or_content_refusal(ctx, response, case):
    """schemathesis's unsupported_method, accepting the contract's refusal of HEAD/TRACE with content."""
    if is_content_refusal(response):
        return None
    return unsupported_method(ctx, response, case)
