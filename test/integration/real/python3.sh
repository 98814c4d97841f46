# requires: /usr/bin/python3
# CPython as it runs by default: pymalloc keeps small objects in arenas it maps itself, so what the
# shim sees is what goes to malloc (larger objects, buffers): dicts, lists, strings, json, re.
/usr/bin/python3 - <<'PY'
import json, re, collections
words = ["w%d" % (i * 7919 % 5003) for i in range(60000)]
counts = collections.Counter(words)
d = {}
for i, w in enumerate(words):
    d.setdefault(w[:3], []).append(i)
text = " ".join(words[:20000])
found = re.findall(r"\bw(\d{2})7\b", text)
obj = {"top": counts.most_common(5), "groups": {k: len(v) for k, v in sorted(d.items())},
       "found": len(found), "sample": found[:10]}
s = json.dumps(obj, sort_keys=True)
print(len(s), s[:300])
print(json.loads(s)["found"], sum(len(x) for x in d.values()))
big = [str(i) * (i % 50) for i in range(100000)]
print(sum(map(len, big)), len(set(big)))
PY
