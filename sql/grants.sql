-- The token service's least-privilege role: exactly what the statements of spec/README.md §7 (the same text in
-- every stack) and the readiness check (`SELECT 1`) need, nothing more. Run it as the tables' owner after
-- schema.sql; idempotent, and a re-run takes back anything granted to the role since on these tables:
--
--   psql "$OWNER_URL" -v ON_ERROR_STOP=1 [-v role=NAME] -f sql/grants.sql      (role: simple_auth unless named)
--
-- The role is created without a password (set one: `\password simple_auth` in psql, or fly's own user management)
-- and may log in; it is no superuser and may create nothing.
--
--   users           SELECT of the five columns the login lookup and the rotate statement read
--   login_failures  SELECT and INSERT (the lock check, the failure count's upsert), UPDATE of the count and its
--                   window, DELETE (a success clears it)
--   refresh_tokens  SELECT of what the statements read or return, INSERT of the five columns a token is written with
--                   (issued_at is its default), UPDATE of used_at and revoked_at; never DELETE (sql/users.py prunes)
--
-- Nothing on channels, channel_members or messages, no sequence (the schema has none), no TRUNCATE, REFERENCES or
-- TRIGGER: the foreign key from refresh_tokens to users is checked with the owner's rights.

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

GRANT SELECT (token_hash, family_id, user_id, client_id, expires_at, used_at, revoked_at) ON refresh_tokens TO :"role";
GRANT INSERT (token_hash, family_id, user_id, client_id, expires_at) ON refresh_tokens TO :"role";
GRANT UPDATE (used_at, revoked_at) ON refresh_tokens TO :"role";

COMMIT;
