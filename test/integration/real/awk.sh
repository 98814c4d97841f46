# requires: awk
# awk: associative arrays, split, sprintf, string building.
seq 1 200000 | awk '
{ k = "k" ($1 * 7919 % 5003); c[k]++; s[k] = s[k] sprintf("%x", $1 % 16) }
END {
    n = 0; for (k in c) n++
    t = 0; for (k in s) t += length(s[k])
    m = split("a,b,c,d,e,f", parts, ",")
    printf "%d %d %d %s\n", n, t, m, parts[4]
}'
