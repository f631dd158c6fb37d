-- docker-compose.yml's PostgreSQL, at its first start after schema, seed and sql/grants.sql: the password of the
-- least-privilege role the stacks log in as. A development password, like the owner's auth/auth: compose publishes
-- PostgreSQL on 127.0.0.1 only. A deployment sets its own (sql/README.md).
ALTER ROLE simple_auth PASSWORD 'simple-auth';
