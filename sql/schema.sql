-- The channel API's schema (users, channels, channel_members, messages), as in
-- the Spring Boot / Actix channel-API comparison. The token service reads only
-- `users`; the other tables are here so the database is the one the tokens are
-- for. Idempotent: safe to run against a database that already has it.

CREATE TABLE IF NOT EXISTS users (
    id            uuid        PRIMARY KEY,
    username      text        NOT NULL UNIQUE CHECK (length(username) BETWEEN 1 AND 64),
    name          text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    -- Stored lowercase so that the login query `WHERE email = lower($1)` is an
    -- exact match on the unique index below (users_email_key), never a scan.
    email         text        NOT NULL UNIQUE CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
    password_hash text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS channels (
    id          uuid        PRIMARY KEY,
    name        text        NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 100),
    description text,
    created_by  uuid        NOT NULL REFERENCES users (id),
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS channel_members (
    channel_id uuid        NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    user_id    uuid        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role       text        NOT NULL DEFAULT 'member' CHECK (role IN ('owner', 'admin', 'member')),
    joined_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (channel_id, user_id)
);
CREATE INDEX IF NOT EXISTS channel_members_user_id_idx ON channel_members (user_id);

CREATE TABLE IF NOT EXISTS messages (
    id         uuid        PRIMARY KEY,
    channel_id uuid        NOT NULL REFERENCES channels (id) ON DELETE CASCADE,
    user_id    uuid        NOT NULL REFERENCES users (id),
    content    text        NOT NULL CHECK (length(content) BETWEEN 1 AND 4000),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS messages_channel_created_idx ON messages (channel_id, created_at);

-- The token service's own tables (spec/README.md §6-§8), the only ones it writes.

-- One row per session (refresh-token family, the tokens' `sid`). Rotation locks it FOR SHARE and revocation updates
-- it, so the two serialise: no successor is written after its family was revoked. A session is alive while it is not
-- revoked, not past expires_at and its credential is the SHA-256 of the user's password_hash now: any change of the
-- stored hash ends every session of the user at its next refresh.
CREATE TABLE IF NOT EXISTS sessions (
    family_id  uuid        PRIMARY KEY,
    user_id    uuid        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id  text        NOT NULL CHECK (length(client_id) BETWEEN 1 AND 128),
    credential bytea       NOT NULL CHECK (length(credential) = 32),  -- SHA-256 of the password_hash the login verified
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,                                   -- login + REFRESH_MAX_LIFETIME_SECONDS
    revoked_at timestamptz
);
CREATE INDEX IF NOT EXISTS sessions_user_idx ON sessions (user_id);
CREATE INDEX IF NOT EXISTS sessions_expires_idx ON sessions (expires_at);

-- Refresh tokens: only the SHA-256 of each token is stored. The password grant writes a session's first token, each
-- refresh marks the presented token used and adds its successor, and presenting a used token again revokes the
-- session (reuse detection, RFC 9700 §4.14.2).
CREATE TABLE IF NOT EXISTS refresh_tokens (
    token_hash bytea       PRIMARY KEY CHECK (length(token_hash) = 32),
    family_id  uuid        NOT NULL REFERENCES sessions (family_id) ON DELETE CASCADE,
    issued_at  timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,                                   -- never after its session's expires_at
    used_at    timestamptz
);

-- A database of the schema before sessions existed: refresh_tokens carried user_id, client_id and revoked_at per
-- token. Each family becomes a session (credential: the user's hash now, so live sessions stay live; created at its
-- first token; ending 90 days later, REFRESH_MAX_LIFETIME_SECONDS' default; revoked when any of its tokens was, or
-- when the user's hash is one no login accepts: a disabled user's session must not come alive by taking the marker as
-- its credential), its tokens expire no later than it, and the old columns go. Runs only while the old columns
-- exist; fly/deploy.sh loads this file in one transaction, so an interrupted upgrade leaves the old schema.
DO $upgrade$
BEGIN
    IF EXISTS (SELECT FROM information_schema.columns
               WHERE table_schema = current_schema() AND table_name = 'refresh_tokens' AND column_name = 'user_id') THEN
        INSERT INTO sessions (family_id, user_id, client_id, credential, created_at, expires_at, revoked_at)
        SELECT t.family_id, t.user_id, t.client_id, sha256(convert_to(u.password_hash, 'UTF8')),
               t.created_at, t.created_at + interval '90 days',
               CASE WHEN u.password_hash LIKE '$argon2id$%' OR u.password_hash LIKE '$hmac-sha256$%'
                    THEN t.revoked_at ELSE coalesce(t.revoked_at, now()) END
        FROM (SELECT family_id, (array_agg(user_id ORDER BY issued_at))[1] AS user_id,
                     (array_agg(client_id ORDER BY issued_at))[1] AS client_id,
                     min(issued_at) AS created_at, max(revoked_at) AS revoked_at
              FROM refresh_tokens GROUP BY family_id) t
        JOIN users u ON u.id = t.user_id
        ON CONFLICT (family_id) DO NOTHING;
        UPDATE refresh_tokens t SET expires_at = s.expires_at
        FROM sessions s WHERE s.family_id = t.family_id AND t.expires_at > s.expires_at;
        ALTER TABLE refresh_tokens DROP COLUMN user_id, DROP COLUMN client_id, DROP COLUMN revoked_at;
        ALTER TABLE refresh_tokens ADD CONSTRAINT refresh_tokens_family_id_fkey
            FOREIGN KEY (family_id) REFERENCES sessions (family_id) ON DELETE CASCADE;
    END IF;
END
$upgrade$;
CREATE INDEX IF NOT EXISTS refresh_tokens_family_idx ON refresh_tokens (family_id);
CREATE INDEX IF NOT EXISTS refresh_tokens_expires_idx ON refresh_tokens (expires_at);

-- Login attempts reserved per lowercased username (known or not), in a window that starts at the first attempt;
-- every instance of the service sees the same count. Giving a reservation back (a shed grant) may bring it to 0.
CREATE TABLE IF NOT EXISTS login_failures (
    username     text        PRIMARY KEY,
    failures     integer     NOT NULL CHECK (failures >= 0),
    window_start timestamptz NOT NULL
);
-- The schema before sessions existed allowed only failures > 0; its check is replaced once.
DO $upgrade$
BEGIN
    IF EXISTS (SELECT FROM pg_constraint WHERE conrelid = 'login_failures'::regclass
               AND conname = 'login_failures_failures_check' AND pg_get_constraintdef(oid) = 'CHECK ((failures > 0))') THEN
        ALTER TABLE login_failures DROP CONSTRAINT login_failures_failures_check;
        ALTER TABLE login_failures ADD CONSTRAINT login_failures_failures_check CHECK (failures >= 0);
    END IF;
END
$upgrade$;
