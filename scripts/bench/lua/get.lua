-- GET the URL given to wrk, with the bearer token from the environment (never in argv).
dofile(debug.getinfo(1, "S").source:match("^@(.*[/\\])") .. "report.lua")

local token = os.getenv("KB_BENCH_TOKEN")
if token and token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end
