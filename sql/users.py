#!/usr/bin/env python3
"""Real users for a simple-auth database: add, reset a password, disable; prune the token service's old rows.

    DATABASE_URL=postgres://... sql/users.py add EMAIL NAME [--username U] [--password-stdin]
    DATABASE_URL=postgres://... sql/users.py reset EMAIL [--password-stdin]
    DATABASE_URL=postgres://... sql/users.py disable EMAIL
    DATABASE_URL=postgres://... sql/users.py prune
    make user ARGS="add alice@example.org 'Alice Example'"

DATABASE_URL is any libpq URL, TLS parameters included (sslmode, sslrootcert=<file>|system, ...).
The password is asked twice on the terminal, or read as one line from stdin with
--password-stdin; never from the command line or the environment: at least 8 characters,
at most 1024 bytes (longer is refused at every stack's POST /token). It is stored as
argon2id with the contract's parameters (m=19456 KiB, t=2, p=1, 16-byte salt, 32-byte
output, PHC string), which every stack verifies.

`disable` replaces the stored hash with the marker `$disabled$<UTC time>`: no scheme of
the contract (`$argon2id$`, `$hmac-sha256$`) accepts it, so every stack answers that user's
logins with invalid_grant, as it does for any unusable stored hash; `reset` gives the user
a new password and so enables them again. Both end every session of the user: the sessions
are revoked in the transaction that changes the hash (spec/README.md §6, §7), so a stolen
refresh token stops working with the password; a login racing the change gets a session bound
to the old hash, which its first refresh finds dead. `prune` deletes sessions that expired or
were revoked more than a day ago (their refresh tokens with them), refresh tokens that expired
more than a day ago and failure counts whose window has passed (spec/README.md §6; run it daily). Each command is one transaction: on
any error nothing is written. Errors are one line on stderr; exit 1 (2 for bad input).
"""
from __future__ import annotations

import argparse
import getpass
import os
import re
import sys
import uuid
from datetime import datetime, timezone

from argon2 import PasswordHasher
from argon2.low_level import Type

# The contract's parameters for new hashes (spec/vectors.json "password_hash_defaults").
ARGON2_M_KIB, ARGON2_T, ARGON2_P, ARGON2_HASH_LEN, ARGON2_SALT_LEN = 19456, 2, 1, 32, 16
HASHER = PasswordHasher(time_cost=ARGON2_T, memory_cost=ARGON2_M_KIB, parallelism=ARGON2_P, hash_len=ARGON2_HASH_LEN,
                        salt_len=ARGON2_SALT_LEN, type=Type.ID)
DISABLED_PREFIX = "$disabled$"
# What the stacks accept at POST /token (spec/README.md): longer input can never log in.
MAX_PASSWORD_BYTES = 1024
MAX_EMAIL_CHARS = 254
MIN_PASSWORD_CHARS = 8  # NIST SP 800-63B's floor for passwords people choose
# Schema limits (sql/schema.sql).
MAX_NAME_CHARS, MAX_USERNAME_CHARS = 200, 64

EMAIL = re.compile(r"[^@\s]{1,64}@[^@\s]+\.[^@\s.]+")
USERNAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class Failure(Exception):
    """One line for the person at the terminal, and the exit code."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


def check_email(raw: str) -> str:
    email = raw.strip().lower()
    if len(email) > MAX_EMAIL_CHARS or CONTROL.search(email) or not EMAIL.fullmatch(email):
        raise Failure(f"not an e-mail address: {raw!r}", 2)
    return email


def check_name(raw: str) -> str:
    name = raw.strip()
    if not name or len(name) > MAX_NAME_CHARS or CONTROL.search(name):
        raise Failure(f"the name must be 1 to {MAX_NAME_CHARS} characters without control characters", 2)
    return name


def check_username(raw: str) -> str:
    username = raw.strip().lower()
    if not USERNAME.fullmatch(username):
        raise Failure(f"not a username: {raw!r} (1 to {MAX_USERNAME_CHARS} of a-z 0-9 . _ -, starting with a letter or "
                      f"digit)", 2)
    return username


def default_username(email: str) -> str:
    local = re.sub(r"[^a-z0-9._-]", "", email.split("@", 1)[0])[:MAX_USERNAME_CHARS].lstrip("._-")
    if not local:
        raise Failure(f"cannot derive a username from {email}: pass one with --username", 2)
    return local


def check_password(password: str) -> str:
    if not password:
        raise Failure("the password is empty", 2)
    if len(password) < MIN_PASSWORD_CHARS:
        raise Failure(f"the password is shorter than {MIN_PASSWORD_CHARS} characters", 2)
    if len(password.encode("utf-8")) > MAX_PASSWORD_BYTES:
        raise Failure(f"the password is longer than {MAX_PASSWORD_BYTES} bytes: no stack accepts it at login", 2)
    if "\x00" in password:
        raise Failure("the password contains a NUL character", 2)
    return password


def read_password(from_stdin: bool) -> str:
    if from_stdin:
        line = sys.stdin.readline()
        return check_password(line.removesuffix("\n").removesuffix("\r"))
    if not sys.stdin.isatty():
        raise Failure("no terminal to ask for the password on: pipe it in with --password-stdin", 2)
    first = check_password(getpass.getpass("New password: "))
    if getpass.getpass("Repeat it: ") != first:
        raise Failure("the two passwords differ", 2)
    return first


def hash_password(password: str) -> str:
    stored = HASHER.hash(password)
    HASHER.verify(stored, password)  # what the stacks will do
    return stored


def connect():
    try:
        import psycopg  # imported here: input errors are reported without the driver
    except ImportError:
        raise Failure("the Python package psycopg is missing: .venv/bin/pip install -r spec/requirements.txt") from None

    url = os.environ.get("DATABASE_URL", "")
    if not url:
        raise Failure("DATABASE_URL is not set (a libpq URL: postgres://user:password@host:5432/db?sslmode=...)", 2)
    try:
        params = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as e:
        raise Failure(f"DATABASE_URL is not a valid libpq URL: {first_line(e)}", 2) from None
    extra = {} if "connect_timeout" in params else {"connect_timeout": 10}
    try:
        return psycopg.connect(url, application_name="simple-auth users.py", **extra)
    except psycopg.OperationalError as e:
        raise Failure(f"cannot connect to the database: {first_line(e)}") from None


def first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def find(conn, email: str):
    return conn.execute("SELECT id, username FROM users WHERE email = %s", (email,)).fetchone()


def cmd_add(conn, args) -> str:
    email, name = check_email(args.email), check_name(args.name)
    username = check_username(args.username) if args.username is not None else default_username(email)
    if find(conn, email):
        raise Failure(f"a user with the e-mail {email} already exists")
    if conn.execute("SELECT 1 FROM users WHERE username = %s", (username,)).fetchone():
        hint = "" if args.username is not None else " (choose another with --username)"
        raise Failure(f"the username {username} is taken{hint}")
    conn.rollback()  # no transaction left open while the password is typed
    stored = hash_password(read_password(args.password_stdin))
    user_id = uuid.uuid4()
    with conn.transaction():
        conn.execute("INSERT INTO users (id, username, name, email, password_hash) VALUES (%s, %s, %s, %s, %s)",
                     (user_id, username, name, email, stored))
    return f"added {email} (username {username}, id {user_id})"


def store_hash(conn, email: str, stored: str, missing: str = "") -> int:
    """Replaces the user's password_hash and revokes their sessions, in one transaction; no such user is a Failure.
    Returns the number of sessions it ended. A session a concurrent login writes after this snapshot is bound to the
    old hash (sessions.credential) and dies at its first refresh."""
    with conn.transaction():
        row = conn.execute("UPDATE users SET password_hash = %s, updated_at = now() WHERE email = %s RETURNING id",
                           (stored, email)).fetchone()
        if row is None:
            raise Failure(f"no user with the e-mail {email}" + (f" {missing}" if missing else ""))
        ended = conn.execute("UPDATE sessions SET revoked_at = now() WHERE user_id = %s AND revoked_at IS NULL",
                             (row[0],)).rowcount
    return ended


def sessions(n: int) -> str:
    return f"{n} session{'' if n == 1 else 's'} ended"


def cmd_reset(conn, args) -> str:
    email = check_email(args.email)
    if not find(conn, email):
        raise Failure(f"no user with the e-mail {email}")
    conn.rollback()
    ended = store_hash(conn, email, hash_password(read_password(args.password_stdin)), "(removed meanwhile)")
    return f"new password set for {email}; {sessions(ended)}"


def cmd_disable(conn, args) -> str:
    email = check_email(args.email)
    marker = DISABLED_PREFIX + datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    ended = store_hash(conn, email, marker)
    return f"disabled {email}: every login answers invalid_grant until `reset`; {sessions(ended)}"


def cmd_prune(conn, args) -> str:
    with conn.transaction():
        # A session's tokens go with it (ON DELETE CASCADE); a used token of a live session stays until it expired
        # a day ago, so that presenting it again is still recognised as reuse.
        ended = conn.execute("DELETE FROM sessions WHERE expires_at < now() - interval '1 day' "
                             "OR revoked_at < now() - interval '1 day'").rowcount
        tokens = conn.execute("DELETE FROM refresh_tokens WHERE expires_at < now() - interval '1 day'").rowcount
        counts = conn.execute("DELETE FROM login_failures WHERE window_start < now() - %s * interval '1 second'",
                              (args.window,)).rowcount
    return f"pruned {ended} ended session{'' if ended == 1 else 's'}, {tokens} expired refresh token" \
           f"{'' if tokens == 1 else 's'} and {counts} failure count{'' if counts == 1 else 's'}"


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="users.py", description=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="add a user (argon2id)")
    add.add_argument("email")
    add.add_argument("name", help="display name (the ID token's name claim)")
    add.add_argument("--username", help="preferred_username (default: the e-mail's local part)")
    add.add_argument("--password-stdin", action="store_true", help="read the password as one line from stdin")
    reset = sub.add_parser("reset", help="set a new password (also enables a disabled user)")
    reset.add_argument("email")
    reset.add_argument("--password-stdin", action="store_true", help="read the password as one line from stdin")
    disable = sub.add_parser("disable", help="refuse every login of the user (invalid_grant in every stack)")
    disable.add_argument("email")
    prune = sub.add_parser("prune", help="delete ended sessions, expired refresh tokens and passed failure windows "
                                         "(run daily)")
    prune.add_argument("--window", type=positive, default=300, metavar="SECONDS",
                       help="the services' LOGIN_FAILURE_WINDOW_SECONDS (default 300): older counts are deleted")
    return ap


def positive(raw: str) -> int:
    if not raw.isdigit() or int(raw) < 1:
        raise argparse.ArgumentTypeError(f"not a positive number of seconds: {raw!r}")
    return int(raw)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    command = {"add": cmd_add, "reset": cmd_reset, "disable": cmd_disable, "prune": cmd_prune}[args.command]
    try:
        # Bad input is reported before a connection is tried.
        if args.command != "prune":
            check_email(args.email)
        if args.command == "add":
            check_name(args.name)
            if args.username is not None:
                check_username(args.username)
        with connect() as conn:
            import psycopg

            try:
                print(command(conn, args))
            except psycopg.errors.UniqueViolation as e:
                what = "username" if (e.diag.constraint_name or "").startswith("users_username") else "e-mail"
                raise Failure(f"a user with that {what} already exists") from None
            except psycopg.errors.UndefinedTable:
                raise Failure("the database lacks the token service's tables: load sql/schema.sql first") from None
            except psycopg.errors.InsufficientPrivilege as e:
                raise Failure(f"not allowed: {first_line(e)}") from None
            except psycopg.Error as e:
                raise Failure(f"database error: {first_line(e)}") from None
    except Failure as e:
        print(f"users.py: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        print("users.py: interrupted, nothing written", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
