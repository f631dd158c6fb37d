"""Verification: the tokens a service issues, checked against its JWKS (or, for a target without one, their
shape), and the conformance gate before a stack is measured."""
from __future__ import annotations

import base64
import http.client
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import stackctl
from stackctl import ROOT

from harness.keys import JWS_ALGS, key_alg, key_kid, key_label


RESOURCE = "channel-api"   # JWT_AUDIENCE as stackctl.contract_env sets it
DEFAULT_CLIENT = "public"  # DEFAULT_CLIENT_ID's default (spec §5)


def verify_service(base_url: str, issuer: str | None, key_type: str | None) -> str | None:
    """Two logins whose tokens verify against the served JWKS; None when all is well, else the reason. With a
    key type (the services this runner starts), the JWKS must serve that dev key's `kid` (spec/vectors.json) and
    both tokens must be signed by it with its algorithm; without one (a --url target), each token's `kid` must be
    in the JWKS and its algorithm one the contract allows, RS256, ES256 or EdDSA."""
    import jwt
    import requests

    try:
        jwks = requests.get(base_url + "/.well-known/jwks.json", timeout=10).json()
        keys = {k["kid"]: k for k in jwks["keys"]}
        want = None
        if key_type is not None:
            want, alg = key_kid(key_type), key_alg(key_type)
            if want not in keys:
                return f"JWKS does not serve the {key_label(key_type)} dev key (kid {want})"
        for creds in ({"username": "john@example.com", "password": "TopSecret0!"},
                      {"username": "legacy42@example.com", "password": "legacy-pass-42"}):
            r = requests.post(base_url + "/token", json=creds, timeout=10)
            if r.status_code != 200:
                return f"login of {creds['username']} answered {r.status_code}: {r.text[:200]}"
            body = r.json()
            for name in ("access_token", "id_token"):
                token = body[name]
                header = jwt.get_unverified_header(token)
                kid = header.get("kid")
                if kid not in keys:
                    return f"{name} has kid {kid!r}, not in the JWKS"
                if want is not None and kid != want:
                    return f"{name} is signed with kid {kid!r}, not the {key_label(key_type)} dev key ({want})"
                expected = alg if want is not None else keys[kid].get("alg") or header.get("alg")
                if expected not in JWS_ALGS or header.get("alg") != expected:
                    return f"{name} is signed with {header.get('alg')!r}, expected {expected!r}"
                # spec §2: the access token's audience is the resource (JWT_AUDIENCE), the ID token's the client
                # (the request's client_id, else DEFAULT_CLIENT_ID: "public"; these logins name none). A --url
                # target may run a release from before that rule, whose ID token carried the resource.
                audience = RESOURCE if name == "access_token" else (
                    [DEFAULT_CLIENT] if key_type is not None else [DEFAULT_CLIENT, RESOURCE])
                claims = jwt.decode(token, jwt.PyJWK(keys[kid], expected).key, algorithms=[expected],
                                    audience=audience, issuer=issuer, options={"verify_iss": issuer is not None})
                if name == "id_token" and claims.get("email") != creds["username"]:
                    return f"id_token email is {claims.get('email')!r}"
        return None
    except Exception as e:  # noqa: BLE001 - any failure is a reason not to measure
        return f"{type(e).__name__}: {e}"


def looks_like_jwt(token) -> bool:
    """Three base64url segments whose first two decode to JSON objects, the header naming an algorithm."""
    if not isinstance(token, str) or token.count(".") != 2:
        return False
    try:
        parts = token.split(".")
        header, payload = (json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4))) for p in parts[:2])
        return isinstance(header, dict) and isinstance(payload, dict) and bool(header.get("alg")) and bool(parts[2])
    except (ValueError, UnicodeDecodeError):
        return False


def verify_basic(base_url: str) -> str | None:
    """For a target without a JWKS (--verify basic): John's login answers 200 with two JWTs (`access_token`,
    `id_token`); signatures are not checked. None when so, else the reason."""
    body = stackctl.JOHN_LOGIN
    parts = urlsplit(base_url)
    conn_cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = conn_cls(parts.hostname, parts.port, timeout=10)
    try:
        conn.request("POST", (parts.path or "") + "/token", body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        text = resp.read().decode(errors="replace")
    except (OSError, http.client.HTTPException) as e:
        return f"{type(e).__name__}: {e}"
    finally:
        conn.close()
    if resp.status != 200:
        return f"login of john@example.com answered {resp.status}: {text[:200]}"
    try:
        data = json.loads(text)
    except ValueError:
        return f"login answered 200 without JSON: {text[:200]!r}"
    for name in ("access_token", "id_token"):
        if not looks_like_jwt(data.get(name) if isinstance(data, dict) else None):
            return f"login answered 200 but {name} is not a JWT: {str(data)[:200]}"
    return None


def conformance_gate(stack: str, key_type: str = stackctl.DEFAULT_KEY_TYPE, log: Path | None = None) -> str | None:
    """The whole suite on its own throw-away database (its outage tests stop and start it), signing with the key
    type the run measures: a stack is measured only with the algorithm it was just shown to get right. When it fails,
    its whole output goes to `log` (the results folder's <stack>-conformance.log) and the reason names the failed test
    and its first assertion line."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", str(ROOT / "spec" / "conformance"), "--stack", stack,
                          "--key-type", key_type], capture_output=True, text=True, env=env)
    if res.returncode == 0:
        return None
    lines = res.stdout.splitlines()
    failed = [ln for ln in lines if ln.startswith(("FAILED", "ERROR"))][:3]
    first_error = next((ln[1:].strip() for ln in lines if ln.startswith("E ")), "")
    reason = "; ".join(failed) or res.stdout.strip()[-300:]
    if first_error:
        reason += f" ({first_error[:300]})"
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(res.stdout + res.stderr)
        reason += f"; output: {log.name}"
    return "conformance suite failed: " + reason
