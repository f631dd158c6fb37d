"""sql/users.py against a throw-away PostgreSQL: .venv/bin/python -m pytest sql/tests"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from argon2 import PasswordHasher, extract_parameters
from argon2.exceptions import InvalidHashError, VerifyMismatchError

ROOT = Path(__file__).resolve().parents[2]
USERS = ROOT / "sql" / "users.py"
VECTORS = json.loads((ROOT / "spec" / "vectors.json").read_text())
sys.path.insert(0, str(ROOT / "wrk"))
import stackctl  # noqa: E402

PASSWORD = "Corr3ct horse battery"


def run(db, *args: str, stdin: str | None = None, url: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "DATABASE_URL": db.url if url is None else url}
    return subprocess.run([sys.executable, str(USERS), *args], input=stdin, env=env, capture_output=True, text=True,
                          timeout=60)


def row(db, email: str) -> dict | None:
    out = db.psql("SELECT json_build_object('id', id, 'username', username, 'name', name, 'hash', password_hash, "
                  f"'updated', updated_at) FROM users WHERE email = '{email}'")
    return json.loads(out) if out else None


def count(db) -> int:
    return int(db.psql("SELECT count(*) FROM users"))


def one_error_line(res: subprocess.CompletedProcess, code: int, text: str) -> None:
    assert res.returncode == code, (res.returncode, res.stdout, res.stderr)
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("users.py: ") and text in res.stderr, res.stderr
    assert "Traceback" not in res.stderr and res.stdout == ""


def test_parameters_are_the_contracts():
    defaults = VECTORS["password_hash_defaults"]["argon2id"]
    users = load_users_module()
    assert (users.ARGON2_M_KIB, users.ARGON2_T, users.ARGON2_P, users.ARGON2_HASH_LEN, users.ARGON2_SALT_LEN) == (
        defaults["m"], defaults["t"], defaults["p"], defaults["hash_len"], defaults["salt_len"])


def test_add_stores_an_argon2id_phc_string_the_stacks_verify(db):
    res = run(db, "add", "Alice@Example.org", "Alice Example", "--password-stdin", stdin=PASSWORD + "\n")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("added alice@example.org (username alice, id ")
    user = row(db, "alice@example.org")  # stored lowercase: the login query is email = lower($1)
    assert user["username"] == "alice" and user["name"] == "Alice Example"
    stored = user["hash"]
    # The exact encoding of spec/vectors.json's argon2id vectors: unpadded standard base64, 16-byte salt, 32-byte output.
    reference = next(v["hash"] for v in VECTORS["passwords"] if v["name"] == "argon2id-owasp-floor")
    pattern = r"\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}"
    assert re.fullmatch(pattern, reference) and re.fullmatch(pattern, stored), stored
    params = extract_parameters(stored)
    assert (params.memory_cost, params.time_cost, params.parallelism, params.hash_len, params.salt_len) == (
        19456, 2, 1, 32, 16)
    assert PasswordHasher().verify(stored, PASSWORD)
    with pytest.raises(VerifyMismatchError):
        PasswordHasher().verify(stored, PASSWORD + "!")
    # A random id, not derived from the e-mail (it is the tokens' sub).
    assert user["id"] != db.psql("SELECT md5('user:alice@example.org')::uuid")


def test_add_with_username(db):
    res = run(db, "add", "bob@example.org", "Bob", "--username", "Bobby_1", "--password-stdin", stdin=PASSWORD)
    assert res.returncode == 0, res.stderr
    assert row(db, "bob@example.org")["username"] == "bobby_1"


@pytest.mark.parametrize("email", ["", "alice", "alice@", "@example.org", "a b@example.org", "a@b", "a@@b.org",
                                   "a@b.org\nb@c.org", "x" * 250 + "@example.org"])
def test_bad_email(db, email):
    before = count(db)
    one_error_line(run(db, "add", email, "Someone", "--password-stdin", stdin=PASSWORD), 2, "not an e-mail address")
    assert count(db) == before


def test_duplicate_email_and_username(db):
    assert run(db, "add", "carol@example.org", "Carol", "--password-stdin", stdin=PASSWORD).returncode == 0
    before = count(db)
    one_error_line(run(db, "add", "CAROL@example.org", "Carol 2", "--password-stdin", stdin=PASSWORD), 1,
                   "already exists")
    one_error_line(run(db, "add", "carol@other.example", "Carol 3", "--password-stdin", stdin=PASSWORD), 1,
                   "username carol is taken (choose another with --username)")
    one_error_line(run(db, "add", "x@example.org", "X", "--username", "johndoe", "--password-stdin", stdin=PASSWORD),
                   1, "username johndoe is taken")
    assert count(db) == before


@pytest.mark.parametrize("password, text", [("", "empty"), ("\n", "empty"), ("short", "shorter than 8"),
                                            ("x" * 1025, "longer than 1024 bytes"), ("abc\x00defghi", "NUL")])
def test_bad_password_writes_nothing(db, password, text):
    before = count(db)
    one_error_line(run(db, "add", "dave@example.org", "Dave", "--password-stdin", stdin=password), 2, text)
    assert count(db) == before and row(db, "dave@example.org") is None


def test_no_terminal_and_no_password_stdin(db):
    res = subprocess.run([sys.executable, str(USERS), "add", "erin@example.org", "Erin"], stdin=subprocess.DEVNULL,
                         env={**os.environ, "DATABASE_URL": db.url}, capture_output=True, text=True, timeout=60)
    one_error_line(res, 2, "--password-stdin")
    assert row(db, "erin@example.org") is None


def test_password_is_never_an_argument(db):
    res = run(db, "add", "frank@example.org", "Frank", "--password", PASSWORD)
    assert res.returncode == 2 and row(db, "frank@example.org") is None


def load_users_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("users_under_test", USERS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_prompt_asks_twice(monkeypatch):
    users = load_users_module()
    monkeypatch.setattr(users.sys.stdin, "isatty", lambda: True)
    answers = iter([PASSWORD, PASSWORD])
    prompts = []
    monkeypatch.setattr(users.getpass, "getpass", lambda prompt: prompts.append(prompt) or next(answers))
    assert users.read_password(from_stdin=False) == PASSWORD and len(prompts) == 2
    answers = iter([PASSWORD, PASSWORD + "?"])
    with pytest.raises(users.Failure, match="the two passwords differ"):
        users.read_password(from_stdin=False)
    answers = iter([""])
    with pytest.raises(users.Failure, match="empty"):
        users.read_password(from_stdin=False)


def test_reset(db):
    assert run(db, "add", "hugo@example.org", "Hugo", "--password-stdin", stdin=PASSWORD).returncode == 0
    before = row(db, "hugo@example.org")
    res = run(db, "reset", "Hugo@Example.org", "--password-stdin", stdin="an0ther passphrase\n")
    assert res.returncode == 0 and res.stdout.strip() == "new password set for hugo@example.org; 0 sessions ended", \
        res.stderr
    after = row(db, "hugo@example.org")
    assert PasswordHasher().verify(after["hash"], "an0ther passphrase")
    with pytest.raises(VerifyMismatchError):
        PasswordHasher().verify(after["hash"], PASSWORD)
    assert after["updated"] > before["updated"] and after["id"] == before["id"]


def test_disable_makes_the_hash_unusable_and_reset_enables(db):
    assert run(db, "add", "ivan@example.org", "Ivan", "--password-stdin", stdin=PASSWORD).returncode == 0
    res = run(db, "disable", "ivan@example.org")
    assert res.returncode == 0 and res.stdout.startswith("disabled ivan@example.org"), res.stderr
    stored = row(db, "ivan@example.org")["hash"]
    assert re.fullmatch(r"\$disabled\$\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stored)
    # The contract's verifiers (spec/README.md) know two schemes by their prefix; any other stored string is an
    # unusable hash and the login is invalid_grant, as for the seed's `$bcrypt$` user (conformance suite).
    assert not stored.startswith(("$argon2id$", "$hmac-sha256$"))
    malformed = [v for v in VECTORS["passwords"] if v.get("malformed") and not v["hash"].startswith("$argon2id$")
                 and not v["hash"].startswith("$hmac-sha256$")]
    assert malformed, "spec/vectors.json has unknown-scheme vectors that every stack treats as unusable"
    with pytest.raises(InvalidHashError):
        PasswordHasher().verify(stored, PASSWORD)
    assert run(db, "reset", "ivan@example.org", "--password-stdin", stdin=PASSWORD).returncode == 0
    assert PasswordHasher().verify(row(db, "ivan@example.org")["hash"], PASSWORD)


def test_unknown_user(db):
    before = db.psql("SELECT md5(string_agg(password_hash, ',' ORDER BY id)) FROM users")
    one_error_line(run(db, "reset", "nobody@example.org", "--password-stdin", stdin=PASSWORD), 1, "no user with")
    one_error_line(run(db, "disable", "nobody@example.org"), 1, "no user with the e-mail nobody@example.org")
    assert db.psql("SELECT md5(string_agg(password_hash, ',' ORDER BY id)) FROM users") == before


def test_unreachable_database(db):
    port = stackctl.free_port()
    started = time.monotonic()
    res = run(db, "add", "jo@example.org", "Jo", "--password-stdin", stdin=PASSWORD,
              url=f"postgres://auth:auth@127.0.0.1:{port}/auth?connect_timeout=5")
    one_error_line(res, 1, "cannot connect to the database")
    assert time.monotonic() - started < 30


def test_no_database_url(db):
    one_error_line(run(db, "disable", "a@example.org", url=""), 2, "DATABASE_URL is not set")


def test_wrong_password_in_url_is_not_echoed(db):
    res = run(db, "disable", "a@example.org", url=db.url.replace("auth:auth@", "auth:hunter2-secret@"))
    one_error_line(res, 1, "cannot connect to the database")
    assert "hunter2-secret" not in res.stderr


def test_schema_missing(db):
    db.psql("DROP DATABASE IF EXISTS empty_db")
    db.psql("CREATE DATABASE empty_db")
    url = db.url.rsplit("/", 1)[0] + "/empty_db"
    one_error_line(run(db, "disable", "a@example.org", url=url), 1, "load sql/schema.sql first")


def add_session(db, email: str, family: str, expires: str = "now() + interval '1 day'",
                revoked: str = "NULL") -> None:
    """A session and its first refresh token as a stack writes them (spec/README.md §7, statement S): the credential
    is the SHA-256 of the user's hash now."""
    db.psql("INSERT INTO sessions (family_id, user_id, client_id, credential, expires_at, revoked_at) "
            f"SELECT '{family}', id, 'public', sha256(convert_to(password_hash, 'UTF8')), {expires}, {revoked} "
            f"FROM users WHERE email = '{email}'")
    add_token(db, family, expires)


def add_token(db, family: str, expires: str = "now() + interval '1 day'") -> None:
    """One more refresh token of the session (a rotation's successor): a random 32-byte hash."""
    db.psql(f"INSERT INTO refresh_tokens (token_hash, family_id, expires_at) VALUES (gen_random_bytes(32), '{family}', "
            f"{expires})")


def live_families(db, email: str) -> set[str]:
    """The user's sessions that are alive (spec/README.md §6): not revoked, not past their end, the hash unchanged."""
    out = db.psql("SELECT s.family_id FROM sessions s JOIN users u ON u.id = s.user_id "
                  f"WHERE u.email = '{email}' AND s.revoked_at IS NULL AND s.expires_at > now() "
                  "AND s.credential = sha256(convert_to(u.password_hash, 'UTF8'))")
    return set(out.split()) if out else set()


def revoked_families(db, email: str) -> set[str]:
    out = db.psql("SELECT s.family_id FROM sessions s JOIN users u ON u.id = s.user_id "
                  f"WHERE u.email = '{email}' AND s.revoked_at IS NOT NULL")
    return set(out.split()) if out else set()


def test_reset_and_disable_end_the_users_sessions(db):
    for who in ("kim", "lou"):
        assert run(db, "add", f"{who}@example.org", who.title(), "--password-stdin", stdin=PASSWORD).returncode == 0
    families = [str(uuid.uuid4()) for _ in range(3)]
    add_session(db, "kim@example.org", families[0])
    add_token(db, families[0])  # a rotated token of the same session
    add_session(db, "kim@example.org", families[1])
    add_session(db, "lou@example.org", families[2])
    assert live_families(db, "kim@example.org") == set(families[:2])
    res = run(db, "reset", "kim@example.org", "--password-stdin", stdin="an0ther passphrase\n")
    assert res.returncode == 0 and res.stdout.strip().endswith("; 2 sessions ended"), (res.stdout, res.stderr)
    assert live_families(db, "kim@example.org") == set()
    assert revoked_families(db, "kim@example.org") == set(families[:2]), "revoked, not only dead by the credential"
    assert live_families(db, "lou@example.org") == {families[2]}, "another user's session is not touched"
    res = run(db, "disable", "lou@example.org")
    assert res.returncode == 0 and res.stdout.strip().endswith("; 1 session ended"), (res.stdout, res.stderr)
    assert live_families(db, "lou@example.org") == set()
    assert revoked_families(db, "lou@example.org") == {families[2]}


def test_a_session_written_against_the_old_hash_is_dead_after_a_reset(db):
    """A login in flight during a reset: its session carries the credential of the hash it verified (the old one)."""
    assert run(db, "add", "ned@example.org", "Ned", "--password-stdin", stdin=PASSWORD).returncode == 0
    old = db.psql("SELECT sha256(convert_to(password_hash, 'UTF8')) FROM users WHERE email = 'ned@example.org'")
    assert run(db, "reset", "ned@example.org", "--password-stdin", stdin="an0ther passphrase\n").returncode == 0
    family = str(uuid.uuid4())
    db.psql("INSERT INTO sessions (family_id, user_id, client_id, credential, expires_at) "
            f"SELECT '{family}', id, 'public', '{old}'::bytea, now() + interval '1 day' FROM users "
            "WHERE email = 'ned@example.org'")
    assert live_families(db, "ned@example.org") == set()


def test_prune_deletes_only_what_is_over(db):
    assert run(db, "add", "max@example.org", "Max", "--password-stdin", stdin=PASSWORD).returncode == 0
    live, old, recent, revoked, fresh_revoked = (str(uuid.uuid4()) for _ in range(5))
    add_session(db, "max@example.org", live)
    add_token(db, live, "now() - interval '2 days'")  # an old token of a live session
    add_session(db, "max@example.org", old, "now() - interval '2 days'")
    add_session(db, "max@example.org", recent, "now() - interval '1 hour'")  # kept a day: reuse still detected
    add_session(db, "max@example.org", revoked, revoked="now() - interval '2 days'")
    add_session(db, "max@example.org", fresh_revoked, revoked="now() - interval '1 hour'")
    db.psql("INSERT INTO login_failures VALUES ('a@example.org', 3, now() - interval '10 minutes'), "
            "('b@example.org', 2, now() - interval '1 minute')")
    res = run(db, "prune")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "pruned 2 ended sessions, 1 expired refresh token and 1 failure count", res.stdout
    families = set(db.psql("SELECT family_id FROM sessions s JOIN users u ON u.id = s.user_id "
                           "WHERE u.email = 'max@example.org'").split())
    assert families == {live, recent, fresh_revoked}
    tokens = db.psql("SELECT family_id FROM refresh_tokens t JOIN sessions s USING (family_id) "
                     "JOIN users u ON u.id = s.user_id WHERE u.email = 'max@example.org' ORDER BY 1").split()
    assert sorted(tokens) == sorted([live, recent, fresh_revoked]), "a pruned session's tokens went with it"
    assert db.psql("SELECT string_agg(username, ',') FROM login_failures") == "b@example.org"
    res = run(db, "prune", "--window", "30")
    assert res.returncode == 0 and res.stdout.strip() == \
        "pruned 0 ended sessions, 0 expired refresh tokens and 1 failure count", res.stdout
    assert db.psql("SELECT count(*) FROM login_failures") == "0"


@pytest.mark.parametrize("window", ["0", "-5", "five"])
def test_prune_refuses_a_bad_window(db, window):
    res = run(db, "prune", "--window", window)
    assert res.returncode == 2 and "not a positive number of seconds" in res.stderr, res.stderr
