"""Key types: the dev keys of spec/vectors.json, their algorithms, kids and names, and the `openssl speed`
algorithm that measures each one's signing speed."""
from __future__ import annotations

import json

import stackctl
from stackctl import ROOT

VECTORS = json.loads((ROOT / "spec" / "vectors.json").read_text())
# The signing key's type decides the tokens' algorithm (spec/README.md §2). Per dev key type (spec/vectors.json
# `keys[].type`, the keys of stackctl.KEYS): how the report names it, the `openssl speed` algorithm that measures its
# signing speed and the label that starts openssl's result line for it (`openssl speed -seconds 1 ALG` prints, e.g.,
# "rsa 2048 bits 0.000295s 0.000017s   3390.0  59647.5", " 256 bits ecdsa (nistp256)   0.0000s   0.0001s  50309.1
# 15860.2", " 253 bits EdDSA (Ed25519)   0.0000s   0.0001s  24434.0   9451.0" under a header naming the columns).
KEY_TYPE_NAMES = {"rsa-2048": "RSA-2048", "rsa-4096": "RSA-4096", "p-256": "P-256", "ed25519": "Ed25519"}
OPENSSL_SPEED = {
    "rsa-2048": ("rsa2048", r"rsa\s+2048\s+bits", "RSA-2048"),
    "rsa-4096": ("rsa4096", r"rsa\s+4096\s+bits", "RSA-4096"),
    "p-256": ("ecdsap256", r"256\s+bits\s+ecdsa\s+\(nistp256\)", "ECDSA P-256"),
    "ed25519": ("ed25519", r"253\s+bits\s+EdDSA\s+\(Ed25519\)", "Ed25519"),
}
DEFAULT_KEY_TYPE = stackctl.DEFAULT_KEY_TYPE
JWS_ALGS = ("RS256", "ES256", "EdDSA")  # what a token may be signed with (spec/README.md §2)


def key_alg(key_type: str) -> str:
    """The JWS algorithm a dev key of this type signs with (spec/vectors.json)."""
    return next(k["alg"] for k in VECTORS["keys"] if k["type"] == key_type)


def key_kid(key_type: str) -> str:
    """The dev key's RFC 7638 thumbprint, the `kid` its JWKS entry and tokens carry (spec/vectors.json)."""
    return next(k["kid"] for k in VECTORS["keys"] if k["type"] == key_type)


def recorded_key_type(record: dict | None) -> str | None:
    """The key type a result set's settings (or a ceiling) record: `key_type` since issue 22, `key_bits` (always
    RSA) in the sets made before it. None when neither is there."""
    record = record or {}
    if record.get("key_type"):
        return record["key_type"]
    if record.get("key_bits"):
        return f"rsa-{record['key_bits']}"
    return None


def key_label(key_type: str | None, alg: str | None = None) -> str:
    """How the report names a key type: "RSA-2048 (RS256)", "P-256 (ES256)", "Ed25519 (EdDSA)"."""
    if key_type is None:
        return "key type unknown"
    if alg is None:
        alg = next((k["alg"] for k in VECTORS["keys"] if k["type"] == key_type), None)
    name = KEY_TYPE_NAMES.get(key_type, key_type)
    return f"{name} ({alg})" if alg else name
