#!/usr/bin/env python3
"""The keys a JWKS serves, as a PEM bundle for JWT_PUBLIC_KEYS_FILE (docs/key-rotation.md).

    python3 fly/jwks_pem.py https://simple-auth-actix.fly.dev/.well-known/jwks.json > published.pem
    python3 fly/jwks_pem.py jwks.json            # a file; "-" reads stdin

Each key becomes a `# kid=... alg=...` comment line (text outside PEM blocks is ignored by the
contract) and a `BEGIN PUBLIC KEY` (SPKI) block. Its use in a rotation: the key a deployment signs
with now may exist nowhere else (fly/deploy.sh pipes a fresh key into `fly secrets set`, never to
disk), and the bundle must carry it once the next key signs. The JWKS is public, so reading it back
is safe. Only the three types of the contract (RSA, EC P-256, Ed25519); each key's `kid` is checked
against its RFC 7638 thumbprint, so a key that does not match its name is refused, not copied.
Standard library only (the DER is written here), like fly/deploy.sh's other Python.
"""
from __future__ import annotations

import base64
import hashlib
import json
import sys
import urllib.request

RSA_ALG = bytes.fromhex("300d06092a864886f70d0101010500")  # SEQUENCE { rsaEncryption, NULL }
EC_P256_ALG = bytes.fromhex("301306072a8648ce3d020106082a8648ce3d030107")  # { id-ecPublicKey, prime256v1 }
ED25519_ALG = bytes.fromhex("300506032b6570")  # SEQUENCE { id-Ed25519 }


class Refused(Exception):
    pass


def b64u(text: str) -> bytes:
    if not isinstance(text, str) or "=" in text:
        raise Refused("a key member is not unpadded base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def der(tag: int, body: bytes) -> bytes:
    n = len(body)
    if n < 0x80:
        return bytes([tag, n]) + body
    size = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + body


def der_int(value: bytes) -> bytes:
    value = value.lstrip(b"\0") or b"\0"
    return der(0x02, b"\0" + value if value[0] & 0x80 else value)


def spki(alg: bytes, key: bytes) -> bytes:
    return der(0x30, alg + der(0x03, b"\0" + key))


def thumbprint(members: dict) -> str:
    canonical = json.dumps(members, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(hashlib.sha256(canonical).digest()).rstrip(b"=").decode()


def to_spki(jwk: dict) -> bytes:
    """SubjectPublicKeyInfo DER of one JWK of the contract's three types; checks its kid."""
    kty = jwk.get("kty")
    if kty == "RSA":
        n, e = b64u(jwk["n"]), b64u(jwk["e"])
        if len(n.lstrip(b"\0")) * 8 < 2048:
            raise Refused(f"kid {jwk.get('kid')}: an RSA key under 2048 bits")
        members = {"e": jwk["e"], "kty": "RSA", "n": jwk["n"]}
        out = spki(RSA_ALG, der(0x30, der_int(n) + der_int(e)))
    elif kty == "EC" and jwk.get("crv") == "P-256":
        x, y = b64u(jwk["x"]), b64u(jwk["y"])
        if len(x) != 32 or len(y) != 32:
            raise Refused(f"kid {jwk.get('kid')}: P-256 coordinates must be 32 bytes each")
        members = {"crv": "P-256", "kty": "EC", "x": jwk["x"], "y": jwk["y"]}
        out = spki(EC_P256_ALG, b"\x04" + x + y)
    elif kty == "OKP" and jwk.get("crv") == "Ed25519":
        x = b64u(jwk["x"])
        if len(x) != 32:
            raise Refused(f"kid {jwk.get('kid')}: an Ed25519 key is 32 bytes")
        members = {"crv": "Ed25519", "kty": "OKP", "x": jwk["x"]}
        out = spki(ED25519_ALG, x)
    else:
        raise Refused(f"kid {jwk.get('kid')}: kty {kty} crv {jwk.get('crv')} is none of the contract's types")
    if jwk.get("kid") != thumbprint(members):
        raise Refused(f"kid {jwk.get('kid')} is not the key's RFC 7638 thumbprint ({thumbprint(members)})")
    return out


def pem(der_bytes: bytes) -> str:
    text = base64.b64encode(der_bytes).decode()
    lines = [text[i:i + 64] for i in range(0, len(text), 64)]
    return "-----BEGIN PUBLIC KEY-----\n" + "\n".join(lines) + "\n-----END PUBLIC KEY-----\n"


def bundle(jwks: dict) -> str:
    keys = jwks.get("keys") if isinstance(jwks, dict) else None
    if not isinstance(keys, list):
        raise Refused('not a JWKS: no "keys" array')
    return "".join(f"# kid={k.get('kid')} alg={k.get('alg')}\n{pem(to_spki(k))}" for k in keys)


def read(source: str) -> dict:
    if source == "-":
        return json.load(sys.stdin)
    if source.startswith(("https://", "http://")):
        with urllib.request.urlopen(source, timeout=10) as res:
            return json.load(res)
    with open(source) as f:
        return json.load(f)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        sys.stdout.write(bundle(read(argv[0])))
    except (Refused, KeyError, ValueError, OSError) as e:
        print(f"jwks_pem: {argv[0]}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
