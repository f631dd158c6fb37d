-- Rotates logins through the seeded populations (sql/README.md), counts the
-- answers by status and prints one JSON line at the end for wrk/bench.py.
--
--   wrk -t2 -c64 -d15s --latency -s wrk/users.lua http://127.0.0.1:8080/token -- [scenario] [wrong-share]
--
-- scenario: users   legacy{n}@example.com / legacy-pass-{n}, n = 1..10000 (default)
--           argon2  argon{n}@example.com / argon-pass-{n},   n = 1..100
--           john    john@example.com / TopSecret0! (what post-token.lua does)
--           mixed   80 % legacy, 20 % argon2id
--           refresh the refresh grant (spec/README.md §7): each connection logs in once as a legacy user, then
--                   presents the refresh token of its last answer, again and again — a write per request
--           unknown nobody{n}@example.com, n = 1..1000000: no such user (each costs the dummy argon2id
--                   check, spec/README.md §1) — the flood of the fault suite's test_flood.py
-- wrong-share: fraction (0..1) of requests sent with a wrong password (answered 400).
--
-- The pattern is deterministic: thread t walks the population from offset
-- (t - 1) * 5003, one user after the other, so runs are reproducible.

local LEGACY, ARGON = 10000, 100
local threads = {}
local thread_count = 0

function setup(thread)
  thread_count = thread_count + 1
  thread:set("thread_id", thread_count)
  table.insert(threads, thread)
end

scenario, wrong_share = nil, nil -- globals: done() runs in another Lua state and reads them from a thread
local seq, sent
counts = {} -- global: done() reads each thread's copy with thread:get

function init(args)
  scenario = args[1] or "users"
  wrong_share = tonumber(args[2] or "0") or 0
  if scenario ~= "users" and scenario ~= "argon2" and scenario ~= "john" and scenario ~= "mixed"
      and scenario ~= "unknown" and scenario ~= "refresh" then
    io.stderr:write("users.lua: unknown scenario '" .. scenario .. "'\n")
    os.exit(2)
  end
  if wrong_share < 0 or wrong_share > 1 then
    io.stderr:write("users.lua: wrong-share must be between 0 and 1\n")
    os.exit(2)
  end
  seq = ((thread_id or 1) - 1) * 5003
  sent = 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

local function credentials(i)
  if scenario == "john" then
    return "john@example.com", "TopSecret0!"
  end
  if scenario == "unknown" then
    local n = (i % 1000000) + 1
    return "nobody" .. n .. "@example.com", "unknown-pass-" .. n
  end
  local argon = scenario == "argon2" or (scenario == "mixed" and i % 5 == 0)
  if argon then
    local n = (i % ARGON) + 1
    return "argon" .. n .. "@example.com", "argon-pass-" .. n
  end
  local n = (i % LEGACY) + 1
  return "legacy" .. n .. "@example.com", "legacy-pass-" .. n
end

-- A request is sent with a wrong password when the fractional part of
-- i * wrong_share crosses an integer: exactly that share, evenly spread.
local function is_wrong(i)
  return wrong_share > 0 and math.floor((i + 1) * wrong_share) > math.floor(i * wrong_share)
end

-- The refresh scenario: each answer's refresh token goes into this thread's queue and the thread's next request
-- presents one. A connection sends its next request only after its answer, so every connection logs in once and
-- then refreshes; a refused refresh (its token is gone) makes that connection log in again. `logins` counts them.
local refresh_tokens = {}
logins = 0 -- global: done() reads it

function request()
  if scenario == "refresh" and #refresh_tokens > 0 then
    sent = sent + 1
    local token = table.remove(refresh_tokens)
    return wrk.format(nil, nil, nil, '{"grant_type":"refresh_token","refresh_token":"' .. token .. '"}')
  end
  if scenario == "refresh" then
    logins = logins + 1
  end
  local user, password = credentials(seq)
  local wrong = is_wrong(sent)
  seq, sent = seq + 1, sent + 1
  if wrong then
    password = password .. "-wrong"
  end
  local body = '{"username":"' .. user .. '","password":"' .. password .. '"}'
  return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
  if scenario == "refresh" and status == 200 then
    local token = body:match('"refresh_token":"([A-Za-z0-9_-]+)"')
    if token then
      table.insert(refresh_tokens, token)
    end
  end
end

local function json_counts(all)
  local parts = {}
  for status, n in pairs(all) do
    table.insert(parts, string.format('"%d":%d', status, n))
  end
  table.sort(parts)
  return "{" .. table.concat(parts, ",") .. "}"
end

function done(summary, latency, requests)
  local all, logins_all = {}, 0
  for _, thread in ipairs(threads) do
    logins_all = logins_all + (thread:get("logins") or 0)
    local c = thread:get("counts") or {}
    for status, n in pairs(c) do
      all[status] = (all[status] or 0) + n
    end
  end
  local scenario = threads[1]:get("scenario")
  local wrong_share = threads[1]:get("wrong_share")
  local seconds = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"scenario":"%s","wrong_share":%s,"logins":%d,"requests":%d,"duration_s":%.3f,"rps":%.2f,"bytes":%d,' ..
    '"status":%s,"socket_errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d},"non_2xx_3xx":%d,' ..
    '"latency_ms":{"mean":%.3f,"stdev":%.3f,"p50":%.3f,"p90":%.3f,"p99":%.3f,"p99_9":%.3f,"max":%.3f}}\n',
    scenario, tostring(wrong_share), logins_all, summary.requests, seconds, summary.requests / seconds, summary.bytes,
    json_counts(all), e.connect, e.read, e.write, e.timeout, e.status,
    latency.mean / 1000, latency.stdev / 1000, latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency:percentile(99.9) / 1000, latency.max / 1000))
end
