-- The token service's least-privilege role: exactly what the statements of spec/README.md §7 (the same text in
-- every stack) and the readiness check (`SELECT 1`) need, nothing more. Run it as the tables' owner after
-- schema.sql; idempotent, and a re-run takes back anything granted to the role since on these tables:
--
--   psql "$OWNER_URL" -v ON_ERROR_STOP=1 [-v role=NAME] -f sql/grants.sql      (role: simple_auth unless named)
--
-- The role is created without a password (set one: `\password simple_auth` in psql, or fly's own user management)
-- and may log in; it is no superuser and may create nothing.
--
--   users           SELECT of the five columns the login lookup, the session's start and the rotation read
--   login_failures  SELECT and INSERT (the attempt's reservation, an upsert), UPDATE of the count and its window
--                   (the upsert, a shed grant giving its reservation back), DELETE (a success clears it)
--   sessions        SELECT of every column but created_at, INSERT of the five columns a session is written with
--                   (created_at is its default), UPDATE of revoked_at (revocation; also what the rotation's
--                   FOR SHARE lock needs); never DELETE (sql/users.py prunes)
--   refresh_tokens  SELECT of every column but issued_at, INSERT of the three columns a token is written with
--                   (issued_at is its default), UPDATE of used_at; never DELETE
--
-- Nothing on channels, channel_members or messages, no sequence (the schema has none), no TRUNCATE, REFERENCES or
-- TRIGGER: the foreign keys (sessions to users, refresh_tokens to sessions) are checked with the owner's rights.

\if :{?role}
\else
  \set role simple_auth
\endif

SELECT format('CREATE ROLE %I LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS', :'role')
WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role') \gexec

BEGIN;

-- Start from nothing on this schema's tables and sequences (a table-level REVOKE takes the column grants too).
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM :"role";
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM :"role";

SELECT format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), :'role') \gexec
GRANT USAGE ON SCHEMA public TO :"role";

GRANT SELECT (id, username, name, email, password_hash) ON users TO :"role";

GRANT SELECT, INSERT, DELETE ON login_failures TO :"role";
GRANT UPDATE (failures, window_start) ON login_failures TO :"role";

GRANT SELECT (family_id, user_id, client_id, credential, expires_at, revoked_at) ON sessions TO :"role";
GRANT INSERT (family_id, user_id, client_id, credential, expires_at) ON sessions TO :"role";
GRANT UPDATE (revoked_at) ON sessions TO :"role";

GRANT SELECT (token_hash, family_id, expires_at, used_at) ON refresh_tokens TO :"role";
GRANT INSERT (token_hash, family_id, expires_at) ON refresh_tokens TO :"role";
GRANT UPDATE (used_at) ON refresh_tokens TO :"role";

COMMIT;
