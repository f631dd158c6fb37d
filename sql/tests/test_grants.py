"""sql/grants.sql against a throw-away PostgreSQL: the role runs every statement of the contract (spec/README.md §7,
read from the contract itself) and nothing else; the statements' races at the SQL level. .venv/bin/python -m pytest sql/tests"""
from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GRANTS = ROOT / "sql" / "grants.sql"
sys.path.insert(0, str(ROOT / "wrk"))
import stackctl  # noqa: E402

ROLE = stackctl.SERVICE_ROLE
JOHN_ID = "md5('user:john@example.com')::uuid"


def psql(url: str, script: str, *variables: str) -> subprocess.CompletedProcess:
    cmd = [stackctl.psql_bin(), url, "-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"]
    for v in variables:
        cmd += ["-v", v]
    return subprocess.run(cmd, input=script, capture_output=True, text=True, timeout=60)


def as_role(db, script: str) -> subprocess.CompletedProcess:
    return psql(db.service_url, script)


def contract_statements() -> list[str]:
    """The statements of spec/README.md §7's SQL block (comments dropped)."""
    text = (ROOT / "spec" / "README.md").read_text()
    block = text.split("The statements, the same text in every stack", 1)[1].split("```sql", 1)[1].split("```", 1)[0]
    statements = []
    for chunk in re.split(r"\n\s*\n", block):
        sql = "\n".join(line for line in chunk.splitlines() if line.strip() and not line.lstrip().startswith("--"))
        if sql:
            statements.append(sql)
    return statements


STATEMENTS = contract_statements()


def statement(start: str, having: str = "", lacking: str | None = None) -> str:
    """The one statement of §7 that starts with `start`, contains `having` and not `lacking`."""
    matches = [sql for sql in STATEMENTS
               if sql.startswith(start) and having in sql and (lacking is None or lacking not in sql)]
    assert len(matches) == 1, f"spec/README.md §7 has {len(matches)} statements like {start!r}: {STATEMENTS}"
    return matches[0]


def sha(token: str) -> str:
    return "'\\x" + hashlib.sha256(token.encode()).hexdigest() + "'::bytea"


def test_the_contract_lists_six_statements():
    assert len(STATEMENTS) == 6, STATEMENTS


def prepared() -> str:
    """The six statements of §7, prepared as the stacks prepare them (parameters typed by the server)."""
    return f"""
PREPARE find_login AS {statement("WITH attempt AS")};
PREPARE give_back AS {statement("UPDATE login_failures")};
PREPARE start_session AS {statement("WITH session AS", having="INSERT INTO sessions")};
PREPARE rotate AS {statement("WITH session AS", having="FOR SHARE OF s")};
PREPARE revoke_reused AS {statement("UPDATE sessions", having="used_at IS NOT NULL")};
PREPARE revoke AS {statement("UPDATE sessions", lacking="used_at IS NOT NULL")};
"""


def john_hash(db) -> str:
    return db.psql("SELECT password_hash FROM users WHERE email = 'john@example.com'")


def test_every_statement_of_the_contract_runs_as_the_role(db):
    """Attempts reserved up to the lock and given back, a session refused for a changed hash and then started, rotated,
    the used token presented again (the family revoked), a session revoked: every statement as the role."""
    family, client = uuid.uuid4(), f"grants-{uuid.uuid4().hex[:8]}"
    first, second, other, refused = (f"{client}-{n}" for n in ("first", "second", "other", "refused"))
    hashed = john_hash(db)
    db.psql("DELETE FROM login_failures WHERE username = 'john@example.com'")
    count = "SELECT 'count', failures FROM login_failures WHERE username = 'john@example.com';"
    script = prepared() + f"""
EXECUTE find_login('John@Example.com', 2, 300);
EXECUTE find_login('John@Example.com', 2, 300);
EXECUTE find_login('John@Example.com', 2, 300);
{count}
EXECUTE give_back('John@Example.com');
EXECUTE give_back('John@Example.com');
EXECUTE find_login('John@Example.com', 2, 300);
EXECUTE start_session('John@Example.com', {sha(refused)}, '{uuid.uuid4()}', ({JOHN_ID}), '{client}', 3600, 7200,
                      'not the hash the check verified');
{count}
EXECUTE start_session('John@Example.com', {sha(first)}, '{family}', ({JOHN_ID}), '{client}', 3600, 7200, '{hashed}');
SELECT 'cleared', count(*) FROM login_failures WHERE username = 'john@example.com';
EXECUTE rotate({sha(first)}, NULL, {sha(second)}, 3600);
EXECUTE rotate({sha(first)}, NULL, {sha(other)}, 3600);
EXECUTE revoke_reused({sha(first)});
EXECUTE rotate({sha(second)}, NULL, {sha(other)}, 3600);
EXECUTE start_session('john@example.com', {sha(other)}, '{uuid.uuid4()}', ({JOHN_ID}), '{client}', 3600, 7200,
                      '{hashed}');
EXECUTE revoke({sha(other)});
"""
    res = as_role(db, script)
    assert res.returncode == 0, res.stderr
    rows = [line for line in res.stdout.splitlines() if line.strip()]
    john = db.psql("SELECT id || '|johndoe|John Doe|john@example.com|' || password_hash FROM users "
                   "WHERE email = 'john@example.com'")
    assert rows[0] == john + "|" and rows[1] == john + "|", f"two attempts within LOGIN_MAX_FAILURES=2: {rows[:2]}"
    assert rows[2].startswith(john + "|") and int(rows[2].rsplit("|", 1)[1]) > 0, f"the third is locked: {rows[2]}"
    assert rows[3] == "count|3", f"reservations stop at LOGIN_MAX_FAILURES + 1: {rows[3]}"
    assert rows[4] == john + "|", f"two given back, the next attempt is the second: {rows[4]}"
    assert rows[5] == "count|2", f"a refused session clears nothing: {rows[5]}"
    assert rows[6] == "cleared|0", f"the session's start cleared the count: {rows[6]}"
    assert rows[7] == f"{john}|{family}|{client}", f"the rotation returns the user, the family and its client: {rows[7]}"
    assert len(rows) == 8, f"a used token and a token of a revoked family rotate to nothing: {rows}"
    sessions = db.psql(f"SELECT count(*), count(*) FILTER (WHERE revoked_at IS NOT NULL) FROM sessions "
                       f"WHERE client_id = '{client}'")
    assert sessions == "2|2", f"(all, revoked) sessions of the run: {sessions}"
    tokens = db.psql(f"SELECT count(*), count(*) FILTER (WHERE used_at IS NOT NULL) FROM refresh_tokens t "
                     f"JOIN sessions s USING (family_id) WHERE s.client_id = '{client}'")
    assert tokens == "3|1", f"(all, used) tokens of the run: {tokens}"
    assert db.psql(f"SELECT count(*) FROM refresh_tokens WHERE token_hash = {sha(refused)}") == "0"


def test_the_limits_of_a_session(db):
    """A refresh token expires at the earlier of its TTL and its session's end; rotation never extends the session;
    another client's token and a session past its end rotate to nothing."""
    family, client = uuid.uuid4(), f"limits-{uuid.uuid4().hex[:8]}"
    first, second, third = (f"{client}-{n}" for n in ("first", "second", "third"))
    script = prepared() + f"""
EXECUTE start_session('john@example.com', {sha(first)}, '{family}', ({JOHN_ID}), '{client}', 3600, 60, '{john_hash(db)}');
EXECUTE rotate({sha(first)}, 'another-client', {sha(second)}, 3600);
EXECUTE rotate({sha(first)}, '{client}', {sha(second)}, 3600);
"""
    res = as_role(db, script)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().endswith(f"|{family}|{client}") and res.stdout.count(str(family)) == 1, res.stdout
    ends = db.psql("SELECT s.expires_at - s.created_at, bool_and(t.expires_at <= s.expires_at), count(*) "
                   f"FROM sessions s JOIN refresh_tokens t USING (family_id) WHERE s.family_id = '{family}' "
                   "GROUP BY s.expires_at, s.created_at")
    assert ends == "00:01:00|t|2", f"(session's lifetime, every token within it, tokens): {ends}"
    db.psql(f"UPDATE sessions SET expires_at = now() - interval '1 second' WHERE family_id = '{family}'")
    res = as_role(db, prepared() + f"EXECUTE rotate({sha(second)}, NULL, {sha(third)}, 3600);")
    assert res.returncode == 0 and res.stdout.strip() == "", (res.stdout, res.stderr)


@pytest.mark.parametrize("sql", [
    "SELECT * FROM users",
    "SELECT created_at FROM users",
    "UPDATE users SET name = 'x' WHERE email = 'john@example.com'",
    "UPDATE users SET password_hash = 'x' WHERE email = 'john@example.com'",
    "INSERT INTO users (id, username, name, email, password_hash) VALUES (gen_random_uuid(), 'g', 'G', 'g@example.org', 'h')",
    "DELETE FROM users WHERE email = 'broken@example.com'",
    "SELECT created_at FROM sessions",
    "DELETE FROM sessions",
    "UPDATE sessions SET expires_at = now() + interval '1 year'",
    "UPDATE sessions SET credential = credential",
    "UPDATE sessions SET user_id = user_id",
    "UPDATE sessions SET client_id = client_id",
    "INSERT INTO sessions (family_id, user_id, client_id, credential, expires_at, created_at) "
    f"VALUES (gen_random_uuid(), ({JOHN_ID}), 'c', {sha('x')}, now(), now())",
    "SELECT issued_at FROM refresh_tokens",
    "DELETE FROM refresh_tokens",
    "UPDATE refresh_tokens SET expires_at = now() + interval '1 year'",
    "UPDATE refresh_tokens SET family_id = family_id",
    "INSERT INTO refresh_tokens (token_hash, family_id, expires_at, issued_at) "
    f"VALUES ({sha('x')}, gen_random_uuid(), now(), now())",
    "INSERT INTO refresh_tokens (token_hash, family_id, expires_at, used_at) "
    f"VALUES ({sha('x')}, gen_random_uuid(), now(), now())",
    "UPDATE login_failures SET username = username",
    "TRUNCATE login_failures",
    "TRUNCATE refresh_tokens",
    "TRUNCATE sessions",
    "SELECT * FROM channels",
    "SELECT * FROM channel_members",
    "INSERT INTO messages (id, channel_id, user_id, content) VALUES (gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'x')",
    "CREATE TABLE public.grants_probe (x integer)",
    "ALTER TABLE login_failures ADD COLUMN x integer",
    "CREATE ROLE grants_probe",
    "CREATE DATABASE grants_probe",
])
def test_nothing_more(db, sql):
    res = as_role(db, sql + ";")
    assert res.returncode != 0 and ("permission denied" in res.stderr or "must be owner" in res.stderr), \
        (res.returncode, res.stdout, res.stderr)


def privileges(db, role: str = ROLE) -> str:
    """Every table and column privilege the role holds, as one sorted text."""
    columns = db.psql("SELECT table_name || '.' || column_name || ':' || privilege_type "
                      f"FROM information_schema.column_privileges WHERE grantee = '{role}' ORDER BY 1")
    tables = db.psql("SELECT table_name || ':' || privilege_type "
                     f"FROM information_schema.table_privileges WHERE grantee = '{role}' ORDER BY 1")
    return " ".join(columns.split()) + " / " + " ".join(tables.split())


def test_the_role_is_not_privileged(db):
    assert db.psql(f"SELECT rolcanlogin, rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls "
                   f"FROM pg_roles WHERE rolname = '{ROLE}'") == "t|f|f|f|f|f"


def test_a_rerun_is_harmless_and_takes_back_what_was_granted_since(db):
    before = privileges(db)
    assert "users.created_at" not in before and "users:SELECT" not in before
    db.psql(f"GRANT ALL ON users, channels, sessions, refresh_tokens TO {ROLE}")
    assert as_role(db, "SELECT * FROM users LIMIT 1;").returncode == 0
    for _ in range(2):
        res = subprocess.run([stackctl.psql_bin(), db.url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", str(GRANTS)],
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0, res.stderr
        assert privileges(db) == before
    assert as_role(db, "SELECT * FROM users LIMIT 1;").returncode != 0
    assert as_role(db, "SELECT 1;").stdout.strip() == "1", "the password stackctl set survives a re-run"


def test_another_role_name(db):
    res = subprocess.run([stackctl.psql_bin(), db.url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-v", "role=auth_reader",
                          "-f", str(GRANTS)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert privileges(db, "auth_reader") == privileges(db)
    assert db.psql("SELECT rolcanlogin, rolsuper FROM pg_roles WHERE rolname = 'auth_reader'") == "t|f"
