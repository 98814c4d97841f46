-- What Lua 5.4, built by heapprof-cc, runs in the access tests (e2e_lib.sh, access_real):
-- tables grown by appending, a hash table of words, strings built and joined, sorts with a Lua
-- comparator, closures, garbage to collect. Deterministic output (its own pseudo-random numbers).
local seed = 12345
local function rnd(n)
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % n
end

local syll = {"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "pe", "du"}
local freq = {}
for _ = 1, 200000 do
    local w = syll[rnd(10) + 1] .. syll[rnd(10) + 1]
    if rnd(3) == 0 then w = w .. syll[rnd(10) + 1] end
    freq[w] = (freq[w] or 0) + 1
end
local keys = {}
for k in pairs(freq) do keys[#keys + 1] = k end
table.sort(keys, function(a, b)
    if freq[a] ~= freq[b] then return freq[a] > freq[b] end
    return a < b
end)
print("distinct words", #keys)
for i = 1, 5 do print(keys[i], freq[keys[i]]) end

local squares = {}
for i = 1, 300000 do squares[i] = i * i % 1000 end
local sum = 0
for i = 1, #squares do sum = sum + squares[i] end
print("sum of squares mod 1000", sum)

local parts = {}
for i = 1, 50000 do parts[#parts + 1] = string.format("%05d", i * 7 % 100000) end
local big = table.concat(parts, ",")
print("joined", #big, big:sub(1, 23))

local points = {}
for i = 1, 50000 do points[i] = {x = rnd(1000), y = rnd(1000), tag = "p" .. i} end
table.sort(points, function(a, b)
    if a.x ~= b.x then return a.x < b.x end
    if a.y ~= b.y then return a.y < b.y end
    return a.tag < b.tag
end)
print("first point", points[1].x, points[1].y, points[1].tag)

local function counter()
    local n = 0
    return function() n = n + 1; return n end
end
local total = 0
for _ = 1, 20000 do
    local c = counter()
    c(); c()
    total = total + c()
end
print("closures", total)
collectgarbage()
print("done")
