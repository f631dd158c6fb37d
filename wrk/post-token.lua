-- The original simple-auth benchmark script, kept so its numbers can be re-run:
-- every request logs John Doe in with a JSON body.
--   wrk -t2 -c64 -d30s -s wrk/post-token.lua http://127.0.0.1:8080/token
-- Answers are counted by status (wrk's response() hook): wrk's own "Non-2xx"
-- line misses nothing, but a 503 would otherwise still count as a request/s.
-- The counts and the 200s per second are printed at the end.
wrk.method = "POST"
wrk.body   = '{"username":"john@example.com","password":"TopSecret0!"}'
wrk.headers["Content-Type"] = "application/json"

local threads = {}
counts = {} -- global: done() reads each thread's copy with thread:get

function setup(thread)
  table.insert(threads, thread)
end

function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
end

function done(summary, latency, requests)
  local all, ok = {}, 0
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("counts") or {}) do
      all[status] = (all[status] or 0) + n
    end
  end
  local parts = {}
  for status, n in pairs(all) do
    table.insert(parts, string.format("%d: %d", status, n))
    if status == 200 then ok = n end
  end
  table.sort(parts)
  io.write(string.format("Statuses: %s\n200 answers/sec: %.2f\n", table.concat(parts, ", "),
    ok / (summary.duration / 1e6)))
end
