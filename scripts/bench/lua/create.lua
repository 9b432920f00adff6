-- POST /v1/base_create with a key unique per request (run, thread, counter); counts every reply but 200.
dofile(debug.getinfo(1, "S").source:match("^@(.*[/\\])") .. "report.lua")

local run = os.getenv("KB_BENCH_RUN") or "r"
local namespace = os.getenv("KB_BENCH_NAMESPACE") or "bench-create"
local counter = 0
non200 = 0

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("KB_BENCH_TOKEN") or "")

function request()
  counter = counter + 1
  local body = string.format('{"namespace":"%s","key":"c%s-%d-%d","description":"Created by the benchmark"}',
    namespace, run, tid, counter)
  return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
  if status ~= 200 then
    non200 = non200 + 1
  end
end
