"""heapprof benchmark workload for python3 (run with PYTHONMALLOC=malloc so every object is a
malloc): builds and discards dicts, lists, strings and tuples, sorts, and round-trips JSON.
Pure Python, deterministic, no I/O except one summary line."""
import json
import sys


def make_record(i):
    return {
        "id": i,
        "name": "user-%d" % i,
        "tags": ["t%d" % (i % 7), "g%d" % (i % 13), "k%d" % (i % 29)],
        "score": (i * 7919) % 1000 / 10.0,
        "address": {"street": "%d Main St" % (i % 500), "zip": "%05d" % (i * 31 % 100000)},
    }


def build_batch(start, n):
    return [make_record(i) for i in range(start, start + n)]


def index_batch(batch):
    by_tag = {}
    for rec in batch:
        for t in rec["tags"]:
            by_tag.setdefault(t, []).append(rec["id"])
    return by_tag


def json_round_trip(batch):
    text = json.dumps(batch)
    back = json.loads(text)
    return len(text), back


def string_work(batch):
    parts = []
    for rec in batch:
        s = "%s|%s|%s" % (rec["name"], ",".join(rec["tags"]), rec["address"]["zip"])
        parts.append(s.upper().replace("|", ";"))
    return "\n".join(parts).split("\n")


def run(rounds, batch_size):
    total = 0
    keep = []  # a window of long-lived objects, replaced over time
    for r in range(rounds):
        batch = build_batch(r * batch_size, batch_size)
        idx = index_batch(batch)
        n, back = json_round_trip(batch)
        lines = string_work(back)
        ranked = sorted(batch, key=lambda rec: (rec["score"], rec["name"]))
        total += n + len(idx) + len(lines) + ranked[0]["id"]
        keep.append({rec["name"]: tuple(rec["tags"]) for rec in ranked[::10]})
        if len(keep) > 8:
            keep.pop(0)
    return total


if __name__ == "__main__":
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 35
    print("py_workload:", run(rounds, 2000))
