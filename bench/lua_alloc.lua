-- An allocation-heavy (GC-heavy) Lua workload for bench/access_alloc.sh: strings built and
-- joined, tables made and dropped, closures, pattern matching; deterministic output.
-- Usage: lua lua_alloc.lua [ROUNDS]
local rounds = tonumber(arg and arg[1]) or 4
local out = 0
local function record(i)
    return {id = i, name = "n" .. (i % 1000), vals = {i, i + 1, i + 2}}
end
local function adder(x) return function(y) return x + y end end
for round = 1, rounds do
    local parts = {}
    for i = 1, 60000 do parts[#parts + 1] = "k" .. i .. ":" .. (i * 31 % 977) end
    local s = table.concat(parts, ";")
    out = out + #s
    local live = {}
    for i = 1, 150000 do live[i % 4096 + 1] = record(i + round) end
    out = out + live[1].vals[3]
    local fs = {}
    for i = 1, 100000 do fs[i % 1000 + 1] = adder(i) end
    for i = 1, 1000 do out = out + fs[i](i) end
    local words = {}
    for w in s:gmatch("k(%d+)") do words[#words + 1] = w end
    local freq = {}
    for i = 1, #words, 7 do
        local k = words[i]:sub(-2)
        freq[k] = (freq[k] or 0) + 1
    end
    for k, v in pairs(freq) do out = out + #k * v end
    out = out % 1000000007
end
print(out)
