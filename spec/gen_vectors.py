#!/usr/bin/env python3
"""Regenerates spec/vectors.json from the dev keys and fixed inputs.

The vectors are committed; this script documents how they were made and lets
anyone check them (`python3 spec/gen_vectors.py --check`). Argon2id hashes use
random salts, so regenerating changes those strings but not their meaning.
"""
import base64
import hashlib
import hmac
import json
import re
import sys
from pathlib import Path

from argon2 import PasswordHasher
from argon2.low_level import Type
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

HERE = Path(__file__).resolve().parent
OUT = HERE / "vectors.json"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def int_b64url(n: int) -> str:
    return b64url(n.to_bytes((n.bit_length() + 7) // 8, "big"))


# The key types the contract accepts (spec/README.md §2): type name, JWS algorithm, the hash at_hash uses.
ALGORITHMS = {"RSA": ("RS256", "sha256"), "P-256": ("ES256", "sha256"), "Ed25519": ("EdDSA", "sha512")}
SIGNING_KEYS = [("rsa-2048", "dev-rsa-2048.pem"), ("rsa-4096", "dev-rsa-4096.pem"),
                ("p-256", "dev-p256.pem"), ("ed25519", "dev-ed25519.pem")]
PUBLIC_BUNDLE = "dev-public-keys.pem"


def public_jwk(public_key) -> tuple[dict, str]:
    """The RFC 7638 members of a public key (lexicographic order) and its JWK family (RSA, P-256, Ed25519)."""
    if isinstance(public_key, rsa.RSAPublicKey):
        pub = public_key.public_numbers()
        return {"e": int_b64url(pub.e), "kty": "RSA", "n": int_b64url(pub.n)}, "RSA"
    if isinstance(public_key, ec.EllipticCurvePublicKey):
        assert public_key.curve.name == "secp256r1", public_key.curve.name
        pub = public_key.public_numbers()
        # RFC 7518 §6.2.1.2: x and y are the full 32-byte field elements, leading zeros kept.
        return {"crv": "P-256", "kty": "EC", "x": b64url(pub.x.to_bytes(32, "big")),
                "y": b64url(pub.y.to_bytes(32, "big"))}, "P-256"
    if isinstance(public_key, ed25519.Ed25519PublicKey):
        raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {"crv": "Ed25519", "kty": "OKP", "x": b64url(raw)}, "Ed25519"  # RFC 8037 §2
    raise ValueError(f"unsupported key {type(public_key).__name__}")


def jwk_entry(public_key) -> dict:
    required, family = public_jwk(public_key)
    # RFC 7638: required members only, lexicographic order, no whitespace.
    canonical = json.dumps(required, separators=(",", ":"), sort_keys=True)
    kid = b64url(hashlib.sha256(canonical.encode("ascii")).digest())
    alg, digest = ALGORITHMS[family]
    jwk = {"kty": required["kty"], "use": "sig", "alg": alg, "kid": kid}
    jwk.update({k: v for k, v in required.items() if k != "kty"})
    return {"alg": alg, "at_hash_digest": digest, "thumbprint_input": canonical, "kid": kid, "jwk": jwk}


def key_entry(key_type: str, file_name: str) -> dict:
    key = serialization.load_pem_private_key((HERE / "keys" / file_name).read_bytes(), password=None)
    entry = {"type": key_type, "file": f"keys/{file_name}"}
    if isinstance(key, rsa.RSAPrivateKey):
        entry["bits"] = key.key_size
    entry.update(jwk_entry(key.public_key()))
    return entry


def bundle_entry(keys: list[dict]) -> dict:
    """The public-key bundle (all four dev keys, the 2048-bit one first) and the JWKS a service publishes with
    dev-rsa-2048 as its signing key and this bundle as JWT_PUBLIC_KEYS_FILE: signing key first, then the
    bundle's keys in file order, a key already published (here the signing key itself) not repeated."""
    text = (HERE / "keys" / PUBLIC_BUNDLE).read_text()
    blocks = re.findall(r"-----BEGIN PUBLIC KEY-----.*?-----END PUBLIC KEY-----", text, re.S)
    kids = [jwk_entry(serialization.load_pem_public_key(b.encode()))["kid"] for b in blocks]
    by_kid = {k["kid"]: k for k in keys}
    signing = next(k for k in keys if k["type"] == "rsa-2048")
    published = [signing["kid"]] + [kid for kid in dict.fromkeys(kids) if kid != signing["kid"]]
    return {"file": f"keys/{PUBLIC_BUNDLE}", "kids": kids, "signing_key": signing["file"],
            "jwks": {"keys": [by_kid[kid]["jwk"] for kid in published]}}


def legacy_hash(password: str, salt_b64: str) -> str:
    mac = hmac.new(base64.b64decode(salt_b64), password.encode("utf-8"), hashlib.sha256).digest()
    return f"$hmac-sha256${salt_b64}${base64.b64encode(mac).decode('ascii')}"


def at_hash(token: str, digest: str) -> str:
    """OIDC Core §3.1.3.6: the left half of the hash the signing algorithm uses (SHA-256 for RS256 and ES256,
    SHA-512 for EdDSA with Ed25519), base64url without padding."""
    full = hashlib.new(digest, token.encode("ascii")).digest()
    return b64url(full[:len(full) // 2])


def build(previous: dict | None) -> dict:
    ph = PasswordHasher(time_cost=2, memory_cost=19456, parallelism=1, hash_len=32, salt_len=16, type=Type.ID)
    prev_pw = {v["name"]: v for v in (previous or {}).get("passwords", [])}

    def argon(name: str, password: str) -> str:
        # Keep the committed hash if it still verifies, so regeneration is stable.
        old = prev_pw.get(name, {}).get("hash")
        if old:
            try:
                ph.verify(old, password)
                return old
            except Exception:
                pass
        return ph.hash(password)

    john_salt = "qmyRlRwXH83LqAUz/V5AUA=="
    john = legacy_hash("TopSecret0!", john_salt)
    assert john == "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE="
    unicode_legacy = legacy_hash("pässwörd-日本", "AAECAwQFBgcICQoLDA0ODw==")
    argon_ok = argon("argon2id-owasp-floor", "CorrectHorse9!")
    argon_uni = argon("argon2id-unicode", "pässwörd-日本")
    # A hash with other (weaker) parameters: verifiers must read m, t, p from the string.
    argon_light = None
    ph_light = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=2, hash_len=32, salt_len=16, type=Type.ID)
    old_light = prev_pw.get("argon2id-other-params", {}).get("hash")
    try:
        if old_light and ph_light.verify(old_light, "other-params"):
            argon_light = old_light
    except Exception:
        argon_light = None
    argon_light = argon_light or ph_light.hash("other-params")

    passwords = [
        {"name": "legacy-john", "password": "TopSecret0!", "hash": john, "valid": True},
        {"name": "legacy-john-wrong", "password": "TopSecret0?", "hash": john, "valid": False},
        {"name": "legacy-john-case", "password": "topsecret0!", "hash": john, "valid": False},
        {"name": "legacy-unicode", "password": "pässwörd-日本", "hash": unicode_legacy, "valid": True},
        {"name": "argon2id-owasp-floor", "password": "CorrectHorse9!", "hash": argon_ok, "valid": True},
        {"name": "argon2id-owasp-floor-wrong", "password": "CorrectHorse9?", "hash": argon_ok, "valid": False},
        {"name": "argon2id-unicode", "password": "pässwörd-日本", "hash": argon_uni, "valid": True},
        {"name": "argon2id-other-params", "password": "other-params", "hash": argon_light, "valid": True},
        {"name": "argon2id-other-params-wrong", "password": "other-params!", "hash": argon_light, "valid": False},
    ]
    malformed = [
        ("unknown-scheme", "$bcrypt$2b$10$abcdefghijklmnopqrstuv"),
        ("empty", ""),
        ("no-prefix", "X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE="),
        ("legacy-missing-hash", "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA=="),
        ("legacy-bad-base64-salt", "$hmac-sha256$!!!not-base64!!!$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE="),
        ("legacy-bad-base64-hash", "$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$%%%%"),
        ("legacy-extra-field", john + "$extra"),
        ("argon2id-truncated", argon_ok.rsplit("$", 1)[0]),
        ("argon2id-bad-params", argon_ok.replace("m=19456,t=2,p=1", "m=abc,t=2,p=1")),
        ("argon2id-wrong-version", argon_ok.replace("$v=19$", "$v=16$")),
        ("argon2i-not-id", argon_ok.replace("$argon2id$", "$argon2i$")),
        ("argon2id-bad-base64", argon_ok.rsplit("$", 1)[0] + "$***"),
    ]
    for name, h in malformed:
        passwords.append({"name": f"malformed-{name}", "password": "TopSecret0!", "hash": h, "valid": False, "malformed": True})

    keys = [key_entry(t, f) for t, f in SIGNING_KEYS]
    tokens = [
        # Arbitrary ASCII strings stand in for access tokens: at_hash is defined over any octets.
        "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl",
        "abc",
        "",
    ]
    return {
        "_comment": "Shared test vectors; regenerate or check with spec/gen_vectors.py. Dev keys only.",
        "password_hash_defaults": {"argon2id": {"m": 19456, "t": 2, "p": 1, "hash_len": 32, "salt_len": 16}},
        "passwords": passwords,
        "keys": keys,
        "public_key_bundle": bundle_entry(keys),
        "at_hash": [{"alg": alg, "access_token": t, "at_hash": at_hash(t, digest)}
                    for alg, digest in ALGORITHMS.values() for t in tokens],
        "refresh_tokens": refresh_token_vectors(),
    }


def refresh_token_vectors() -> dict:
    """spec/README.md §7: a refresh token is 32 bytes, base64url without padding (43 characters); the database
    keeps SHA-256 over those 43 ASCII characters. Fixed byte patterns, so the file regenerates identically."""
    raw = [bytes(range(32)), bytes([0xFF] * 32), bytes(range(0xE0, 0x100))]
    valid = [{"bytes_hex": r.hex(), "token": b64url(r), "sha256_hex": hashlib.sha256(b64url(r).encode()).hexdigest()}
             for r in raw]
    good = valid[0]["token"]
    malformed = {
        "one-short": good[:42],
        "one-long": good + "A",
        "padded": good + "=",
        "standard-alphabet-plus": "+" + good[1:],
        "standard-alphabet-slash": "/" + good[1:],
        "space-inside": good[:20] + " " + good[21:],
        "non-ascii": "é" + good[1:],
        "dot": good[:42] + ".",
        "access-token-like": "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln",
    }
    return {"valid": valid, "malformed": [{"name": k, "token": v} for k, v in malformed.items()]}


def main() -> int:
    previous = json.loads(OUT.read_text()) if OUT.exists() else None
    data = build(previous)
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if "--check" in sys.argv:
        if previous is None or json.loads(text) != previous:
            print("spec/vectors.json is out of date: run python3 spec/gen_vectors.py", file=sys.stderr)
            return 1
        print("spec/vectors.json is up to date")
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
