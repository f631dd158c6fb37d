"""The races of spec/README.md §7 at the SQL level, two connections of the service's role at a time: a revocation
waits for a rotation in progress and a rotation after a revocation finds nothing, so no successor outlives its
family; a session written against a hash that changed is refused (statement S) or dead at its first refresh
(statement R). Deterministic: the second connection is seen waiting on the first one's lock (pg_stat_activity)
before the first commits. .venv/bin/python -m pytest sql/tests"""
from __future__ import annotations

import hashlib
import threading
import time
import uuid

import psycopg
import pytest

from test_grants import JOHN_ID, prepared

LOCK_WAIT_LIMIT = 30  # seconds to see the second connection blocked; a bound on a wait, never an asserted timing


def sha(token: str) -> str:
    return "'\\x" + hashlib.sha256(token.encode()).hexdigest() + "'::bytea"


@pytest.fixture
def role(db):
    """A factory of connections as the service's role, each with the six statements prepared."""
    conns = []

    def connect(autocommit: bool = True) -> psycopg.Connection:
        conn = psycopg.connect(db.service_url, autocommit=autocommit)
        conns.append(conn)
        conn.execute(prepared())
        conn.commit()
        return conn

    yield connect
    for conn in conns:
        conn.close()


def john_hash(db) -> str:
    return db.psql("SELECT password_hash FROM users WHERE email = 'john@example.com'")


def start_session(conn, db, token: str, client: str, hashed: str | None = None) -> uuid.UUID:
    family = uuid.uuid4()
    hashed = john_hash(db) if hashed is None else hashed
    cur = conn.execute(f"EXECUTE start_session('john@example.com', {sha(token)}, '{family}', ({JOHN_ID}), '{client}', "
                       f"3600, 7200, '{hashed}')")
    assert cur.rowcount == 1
    return family


def rotate(conn, presented: str, successor: str) -> list[tuple]:
    return conn.execute(f"EXECUTE rotate({sha(presented)}, NULL, {sha(successor)}, 3600)").fetchall()


class Blocked(threading.Thread):
    """Runs one statement on its own connection; the test sees it wait on a lock, then lets it finish."""

    def __init__(self, conn: psycopg.Connection, sql: str):
        super().__init__(daemon=True)
        self.conn, self.sql, self.pid = conn, sql, conn.info.backend_pid
        self.rows: list[tuple] | None = None
        self.rowcount: int | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            cur = self.conn.execute(self.sql)
            self.rowcount = cur.rowcount
            self.rows = cur.fetchall() if cur.description else []
        except BaseException as e:  # reported by the test
            self.error = e

    def wait_until_blocked(self, db) -> None:
        deadline = time.monotonic() + LOCK_WAIT_LIMIT
        while time.monotonic() < deadline:
            if db.psql(f"SELECT wait_event_type FROM pg_stat_activity WHERE pid = {self.pid}") == "Lock":
                return
            assert self.is_alive(), f"finished without waiting: rows {self.rows}, error {self.error}"
            time.sleep(0.05)
        raise AssertionError(f"the statement never waited on a lock: {self.sql}")

    def result(self) -> list[tuple]:
        self.join(LOCK_WAIT_LIMIT)
        assert not self.is_alive(), "still waiting after the lock was released"
        assert self.error is None, self.error
        return self.rows


def live(db, family: uuid.UUID) -> bool:
    return db.psql("SELECT count(*) FROM sessions s JOIN users u ON u.id = s.user_id "
                   f"WHERE s.family_id = '{family}' AND s.revoked_at IS NULL AND s.expires_at > now() "
                   "AND s.credential = sha256(convert_to(u.password_hash, 'UTF8'))") == "1"


@pytest.mark.parametrize("revocation", ["revoke", "revoke_reused"])
def test_a_revocation_waits_for_a_rotation_and_its_successor_is_dead(db, role, revocation):
    client = f"race-{uuid.uuid4().hex[:8]}"
    first, second, third, stolen = (f"{client}-{n}" for n in ("first", "second", "third", "stolen"))
    rotating, revoking = role(autocommit=False), role()
    family = start_session(revoking, db, first, client)
    if revocation == "revoke_reused":  # a used token of the family: the thief's copy of `stolen`
        assert rotate(revoking, first, stolen)
        first = stolen
        assert rotate(revoking, first, f"{client}-next")
        revoked_by = first  # presenting the used token again
        first = f"{client}-next"
    else:
        revoked_by = first
    assert rotate(rotating, first, second), "the rotation holds the session row FOR SHARE until it commits"
    revoker = Blocked(revoking, f"EXECUTE {revocation}({sha(revoked_by)})")
    revoker.start()
    revoker.wait_until_blocked(db)
    rotating.commit()
    revoker.result()
    assert revoker.rowcount == 1, "the revocation updated the session after the rotation committed"
    assert not live(db, family)
    assert rotate(rotating, second, third) == [], "the successor written just before the revocation is dead"
    rotating.commit()


def test_a_rotation_after_a_revocation_finds_nothing(db, role):
    client = f"race-{uuid.uuid4().hex[:8]}"
    first, second = f"{client}-first", f"{client}-second"
    revoking, rotating = role(autocommit=False), role()
    family = start_session(rotating, db, first, client)
    assert revoking.execute(f"EXECUTE revoke({sha(first)})").rowcount == 1
    rotator = Blocked(rotating, f"EXECUTE rotate({sha(first)}, NULL, {sha(second)}, 3600)")
    rotator.start()
    rotator.wait_until_blocked(db)
    revoking.commit()
    assert rotator.result() == [], "the rotation re-read the session row after the revocation and found it revoked"
    assert db.psql(f"SELECT count(*) FROM refresh_tokens WHERE family_id = '{family}'") == "1", "no successor written"
    assert db.psql(f"SELECT count(*) FROM refresh_tokens WHERE token_hash = {sha(first)} AND used_at IS NULL") == "1"


def test_a_session_for_a_hash_that_changed_is_not_written(db, role):
    client = f"race-{uuid.uuid4().hex[:8]}"
    conn = role()
    verified = john_hash(db)
    try:
        db.psql("UPDATE users SET password_hash = password_hash || '-reset' WHERE email = 'john@example.com'")
        cur = conn.execute(f"EXECUTE start_session('john@example.com', {sha(client)}, '{uuid.uuid4()}', ({JOHN_ID}), "
                           f"'{client}', 3600, 7200, '{verified}')")
        assert cur.rowcount == 0, "the hash the check verified is no longer the user's: no session"
        assert db.psql(f"SELECT count(*) FROM sessions WHERE client_id = '{client}'") == "0"
    finally:
        db.psql(f"UPDATE users SET password_hash = '{verified}' WHERE email = 'john@example.com'")


def test_a_login_racing_a_reset_gets_a_dead_session(db, role):
    """The reset's transaction is open when the login writes its session against the old hash (which it still sees):
    after the reset commits, the session's first refresh finds it dead."""
    client = f"race-{uuid.uuid4().hex[:8]}"
    first, second = f"{client}-first", f"{client}-second"
    verified = john_hash(db)
    login = role()
    with psycopg.connect(db.url) as owner:  # sql/users.py reset: the hash and the user's sessions, one transaction
        owner.execute("UPDATE users SET password_hash = password_hash || '-reset' WHERE email = 'john@example.com'")
        owner.execute(f"UPDATE sessions SET revoked_at = now() WHERE user_id = ({JOHN_ID}) AND revoked_at IS NULL")
        family = start_session(login, db, first, client, verified)
        owner.commit()
    try:
        assert db.psql(f"SELECT revoked_at IS NULL FROM sessions WHERE family_id = '{family}'") == "t", \
            "the reset did not see the session written after its snapshot"
        assert not live(db, family)
        assert rotate(login, first, second) == [], "the session is bound to the old hash"
    finally:
        db.psql(f"UPDATE users SET password_hash = '{verified}' WHERE email = 'john@example.com'")
