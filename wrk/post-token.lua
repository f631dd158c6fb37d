-- The original simple-auth benchmark script, kept so its numbers can be re-run:
-- every request logs John Doe in with a JSON body.
--   wrk -t2 -c64 -d30s -s wrk/post-token.lua http://127.0.0.1:8080/token
wrk.method = "POST"
wrk.body   = '{"username":"john@example.com","password":"TopSecret0!"}'
wrk.headers["Content-Type"] = "application/json"
