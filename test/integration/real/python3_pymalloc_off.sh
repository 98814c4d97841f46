# requires: /usr/bin/python3
# CPython with PYTHONMALLOC=malloc: every object allocation goes through malloc/free.
PYTHONMALLOC=malloc /usr/bin/python3 -c '
import json
objs = [{"id": i, "name": "n%d" % i, "tags": [str(j) for j in range(i % 9)]} for i in range(80000)]
s = json.dumps(objs[::7])
back = json.loads(s)
print(len(s), sum(len(o["tags"]) for o in back))
t = tuple(bytearray(i % 300) for i in range(30000))
print(sum(map(len, t)))
'
