"""sql/schema.sql upgrades a database of the schema before sessions existed (schema_before_sessions.sql) when it is
loaded again, as fly/deploy.sh loads it on every deploy (one transaction): each refresh-token family becomes a session,
live sessions stay live, revoked ones stay revoked, and a second load changes nothing. .venv/bin/python -m pytest
sql/tests"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from test_grants import GRANTS, ROLE, prepared, psql, sha

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "sql" / "schema.sql"
OLD_SCHEMA = Path(__file__).with_name("schema_before_sessions.sql")
sys.path.insert(0, str(ROOT / "wrk"))
import stackctl  # noqa: E402

ANN = "md5('user:ann@example.org')::uuid"
BOB = "md5('user:bob@example.org')::uuid"

OLD_ROWS = f"""
INSERT INTO users (id, username, name, email, password_hash) VALUES
  ({ANN}, 'ann', 'Ann', 'ann@example.org', '$hmac-sha256$qmyRlRwXH83LqAUz/V5AUA==$X864zD50ii23b75iB8UBUrbf0HTIHGRkHuR+ioTD9WE='),
  ({BOB}, 'bob', 'Bob', 'bob@example.org', '$disabled$2026-01-01T00:00:00Z');
-- live: ann's session of two tokens, the first used by the rotation that issued the second
INSERT INTO refresh_tokens (token_hash, family_id, user_id, client_id, issued_at, expires_at, used_at) VALUES
  ({sha('live-1')}, '00000000-0000-0000-0000-00000000000a', {ANN}, 'web', now() - interval '2 days',
   now() + interval '28 days', now() - interval '1 day'),
  ({sha('live-2')}, '00000000-0000-0000-0000-00000000000a', {ANN}, 'web', now() - interval '1 day',
   now() + interval '29 days', NULL);
-- revoked: reuse detected, both tokens revoked
INSERT INTO refresh_tokens (token_hash, family_id, user_id, client_id, issued_at, expires_at, used_at, revoked_at) VALUES
  ({sha('gone-1')}, '00000000-0000-0000-0000-00000000000b', {ANN}, 'public', now() - interval '3 days',
   now() + interval '27 days', now() - interval '2 days', now() - interval '1 day'),
  ({sha('gone-2')}, '00000000-0000-0000-0000-00000000000b', {ANN}, 'public', now() - interval '2 days',
   now() + interval '28 days', NULL, now() - interval '1 day');
-- old: first login 80 days ago, its last token would outlive the session's 90 days
INSERT INTO refresh_tokens (token_hash, family_id, user_id, client_id, issued_at, expires_at, used_at) VALUES
  ({sha('old-1')}, '00000000-0000-0000-0000-00000000000c', {ANN}, 'web', now() - interval '80 days',
   now() - interval '50 days', now() - interval '60 days'),
  ({sha('old-2')}, '00000000-0000-0000-0000-00000000000c', {ANN}, 'web', now() - interval '60 days',
   now() + interval '30 days', NULL);
-- a disabled user's session, its hash already the marker
INSERT INTO refresh_tokens (token_hash, family_id, user_id, client_id, issued_at, expires_at) VALUES
  ({sha('bob-1')}, '00000000-0000-0000-0000-00000000000d', {BOB}, 'public', now(), now() + interval '30 days');
INSERT INTO login_failures VALUES ('ann@example.org', 3, now());
"""


@pytest.fixture(scope="module")
def upgraded(db):
    """A database of the old schema with rows, then today's schema loaded twice, each load one transaction."""
    db.psql("DROP DATABASE IF EXISTS upgrade_db")
    db.psql("CREATE DATABASE upgrade_db")
    url = db.url.rsplit("/", 1)[0] + "/upgrade_db"
    res = psql(url, OLD_SCHEMA.read_text() + OLD_ROWS)
    assert res.returncode == 0, res.stderr
    loads = []
    for _ in range(2):
        res = subprocess.run([stackctl.psql_bin(), url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-1", "-f", str(SCHEMA)],
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        loads.append(dump(url))
    assert loads[0] == loads[1], "the second load changed nothing"
    return url


def query(url: str, sql: str) -> str:
    res = psql(url, sql + ";")
    assert res.returncode == 0, res.stderr
    return res.stdout.strip()


def dump(url: str) -> str:
    """The token service's tables' definitions and rows, as text."""
    return query(url, "SELECT string_agg(table_name || '.' || column_name || ':' || data_type, ' ' "
                      "ORDER BY table_name, column_name) FROM information_schema.columns "
                      "WHERE table_name IN ('sessions', 'refresh_tokens', 'login_failures')") + "\n" + \
        query(url, "SELECT string_agg(conname || ':' || pg_get_constraintdef(oid), ' ' ORDER BY conname) "
                   "FROM pg_constraint WHERE conrelid IN ('sessions'::regclass, 'refresh_tokens'::regclass, "
                   "'login_failures'::regclass)") + "\n" + \
        query(url, "SELECT string_agg(indexname, ' ' ORDER BY indexname) FROM pg_indexes "
                   "WHERE tablename IN ('sessions', 'refresh_tokens', 'login_failures')") + "\n" + \
        query(url, "SELECT string_agg(s::text, ' ' ORDER BY family_id) FROM sessions s") + "\n" + \
        query(url, "SELECT string_agg(t::text, ' ' ORDER BY token_hash) FROM refresh_tokens t")


def test_the_upgraded_tables_are_todays(db, upgraded):
    fresh = dump(db.url).splitlines()[:3]
    assert dump(upgraded).splitlines()[:3] == fresh, "columns, constraints and indexes as a fresh load makes them"


def test_each_family_became_a_session(upgraded):
    """a: live; b: revoked (its tokens were); c: live, ending 90 days after its first login; d: a disabled user's,
    revoked although none of its tokens was."""
    rows = query(upgraded, "SELECT s.family_id, s.user_id = u.id, s.client_id, "
                           "s.credential = sha256(convert_to(u.password_hash, 'UTF8')), "
                           "s.created_at = (SELECT min(issued_at) FROM refresh_tokens t WHERE t.family_id = s.family_id), "
                           "s.expires_at = s.created_at + interval '90 days', s.revoked_at IS NOT NULL "
                           "FROM sessions s JOIN users u ON u.id = s.user_id ORDER BY 1").splitlines()
    assert rows == ["00000000-0000-0000-0000-00000000000a|t|web|t|t|t|f",
                    "00000000-0000-0000-0000-00000000000b|t|public|t|t|t|t",
                    "00000000-0000-0000-0000-00000000000c|t|web|t|t|t|f",
                    "00000000-0000-0000-0000-00000000000d|t|public|t|t|t|t"], rows


def test_the_tokens_stay_within_their_sessions(upgraded):
    assert query(upgraded, "SELECT count(*), count(used_at) FROM refresh_tokens") == "7|3"
    assert query(upgraded, "SELECT count(*) FROM refresh_tokens t JOIN sessions s USING (family_id) "
                           "WHERE t.expires_at > s.expires_at") == "0"
    assert query(upgraded, f"SELECT t.expires_at = s.expires_at FROM refresh_tokens t JOIN sessions s USING (family_id) "
                           f"WHERE t.token_hash = {sha('old-2')}") == "t", "the old session's last token was cut short"
    assert query(upgraded, f"SELECT t.expires_at < s.expires_at FROM refresh_tokens t JOIN sessions s USING (family_id) "
                           f"WHERE t.token_hash = {sha('live-2')}") == "t", "a token within its session is unchanged"


def test_the_failure_counts_may_reach_zero(upgraded):
    assert query(upgraded, "UPDATE login_failures SET failures = 0 RETURNING failures") == "0"


def test_the_role_refreshes_a_live_upgraded_session_and_no_other(upgraded):
    res = subprocess.run([stackctl.psql_bin(), upgraded, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", str(GRANTS)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    query(upgraded, f"ALTER ROLE {ROLE} PASSWORD 'simple-auth'")
    role_url = upgraded.replace(upgraded.split("//", 1)[1].split("@", 1)[0], f"{ROLE}:simple-auth", 1)
    out = query(role_url, prepared() + "\n".join(
        f"EXECUTE rotate({sha(presented)}, NULL, {sha(presented + '-next')}, 3600);"
        for presented in ("live-2", "live-1", "gone-2", "old-2", "bob-1")))
    rows = out.splitlines()
    assert len(rows) == 2 and rows[0].endswith("|00000000-0000-0000-0000-00000000000a|web") \
        and rows[1].endswith("|00000000-0000-0000-0000-00000000000c|web"), \
        f"live-2 and old-2 rotate; a used token, a revoked family and a disabled user's do not: {rows}"
