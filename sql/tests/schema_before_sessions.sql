-- sql/schema.sql as it was before sessions existed (refresh_tokens carried user_id, client_id and revoked_at):
-- test_schema.py loads it, rows in it, and upgrades it with today's sql/schema.sql.

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

-- The token service's own tables (spec/README.md §7, §8), the only ones it writes.

-- Refresh tokens: only the SHA-256 of each token is stored. A family is one session (the tokens' `sid`): the
-- password grant starts it, each refresh marks the presented token used and adds its successor, and presenting a
-- used token again revokes the whole family (reuse detection, RFC 9700 §4.14.2).
CREATE TABLE IF NOT EXISTS refresh_tokens (
    token_hash bytea       PRIMARY KEY CHECK (length(token_hash) = 32),
    family_id  uuid        NOT NULL,
    user_id    uuid        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id  text        NOT NULL CHECK (length(client_id) BETWEEN 1 AND 128),
    issued_at  timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    revoked_at timestamptz
);
CREATE INDEX IF NOT EXISTS refresh_tokens_family_idx ON refresh_tokens (family_id);
CREATE INDEX IF NOT EXISTS refresh_tokens_user_idx ON refresh_tokens (user_id);
CREATE INDEX IF NOT EXISTS refresh_tokens_expires_idx ON refresh_tokens (expires_at);

-- Failed logins per lowercased username (known or not), in a window that starts at the first failure; every
-- instance of the service sees the same count.
CREATE TABLE IF NOT EXISTS login_failures (
    username     text        PRIMARY KEY,
    failures     integer     NOT NULL CHECK (failures > 0),
    window_start timestamptz NOT NULL
);
