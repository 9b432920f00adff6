-- Shared by the wrk scripts: numbers each thread (tid, for unique keys) and prints one JSON line at the end.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function done(summary, latency, requests)
  local non200, counted = 0, false
  for _, thread in ipairs(threads) do
    local n = thread:get("non200")
    if n then
      non200 = non200 + n
      counted = true
    end
  end
  local e = summary.errors
  io.write(string.format(
    'KB_BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},"non200":%s,' ..
    '"latency_us":{"min":%d,"mean":%.1f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout, counted and tostring(non200) or "null",
    latency.min, latency.mean, latency.max,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9)))
end
