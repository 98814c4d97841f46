"""Checks heapprof-report's merged and diff JSON of test/profiling/merge_diff.c's runs
(test/integration/cases/report-merge-diff.sh). Usage: check_merge_diff.py KIND JSON [ARGS...]
KIND: snapshot (a numbered dump alone), snapshots (that dump merged with its exit profile),
processes (the runs of 10 and 30 merged), fork (parent and child merged), diff (30 minus 10);
for any program: same-stacks (a merge allocates as much per symbolised stack as the single
profiles ARGS... together), self-diff (a profile minus itself: nothing changed); programs
(same-stacks of two builds of merge_diff.c, each site once a program).
Exit status 0 when every figure is as the program made it, else 1 with one line a problem."""
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "profiling"))
from report_json import expect, load, problems  # noqa: E402


def sites(doc):
    """The context of each site_* function (innermost frame), which must be unique."""
    got = {}
    for c in doc["contexts"]:
        if c["frames"] and c["frames"][0]["function"].startswith("site_"):
            name = c["frames"][0]["function"]
            expect(f"{name}: more than one context", name not in got)
            got[name] = c
    return got


def figures(sites_, name, **want):
    c = sites_.get(name)
    if c is None:
        expect(f"{name}: no context", False)
        return
    for k, v in want.items():
        have = c["delta"][k[2:]] if k.startswith("d_") else c[k]
        expect(f"{name}: {k} {have}, expected {v}", have == v)


def totals(doc, paths):
    """The sum of the given single profiles' total_allocs (their own JSON files)."""
    return sum(json.load(open(p))["summary"]["total_allocs"] for p in paths)


def per_stack(doc):
    """Allocations per stack as the symbolizer names it (a frame in no module by its address)."""
    m = {}
    for c in doc["contexts"]:
        k = tuple((f["module"], f["function"], f["file"], f["line"],
                   "" if f["module"] else f["address"]) for f in c["frames"])
        m[k] = m.get(k, 0) + c["allocs"]
    return m


def main():
    kind, doc = sys.argv[1], load(sys.argv[2])
    if kind in ("same-stacks", "programs"):
        mine, want = per_stack(doc), {}
        for path in sys.argv[3:]:
            for k, v in per_stack(load(path)).items():
                want[k] = want.get(k, 0) + v
        differ = [k for k in set(mine) | set(want) if mine.get(k, 0) != want.get(k, 0)]
        expect(f"{len(differ)} of {len(want)} stacks differ, as "
               f"{[(k[0][1] if k else '', mine.get(k, 0), want.get(k, 0)) for k in differ[:3]]}",
               not differ and len(want) > (100 if kind == "same-stacks" else 4))
        if kind == "programs":  # each program's sites apart
            for name in ("site_each", "site_big"):
                n = sum(1 for c in doc["contexts"] if c["frames"] and c["frames"][0]["function"] == name)
                expect(f"{name}: {n} contexts, expected one a program", n == 2)
    elif kind == "self-diff":
        changed = [c["context_id"] for c in doc["contexts"] if any(c["delta"].values())]
        expect(f"contexts changed against themselves: {changed[:5]}", not changed)
        expect("a context not in the base", all(c["in_base"] for c in doc["contexts"]))
        expect(f"diff_base {doc['diff_base']}", doc["diff_base"]["contexts_only_in_base"] == 0)
    s = sites(doc) if kind != "programs" else {}
    if kind in ("same-stacks", "self-diff", "programs"):
        pass
    elif kind == "snapshot":
        figures(s, "site_each", alloc_count=5, allocs=5, total_size=500)
    elif kind == "snapshots":
        m = doc["merged_from"]
        expect(f"merged_from {m}", len(m) == 2 and not m[0]["used"] and m[0]["superseded_by"] == 1
               and m[1]["used"] and m[1]["dump_reason"] == "exit")
        figures(s, "site_each", alloc_count=10, allocs=10, total_size=1000)
        figures(s, "site_big", alloc_count=1, total_size=10000, live_size=10000)
        want = totals(doc, sys.argv[3:])
        expect(f"total_allocs {doc['summary']['total_allocs']}, expected the exit profile's {want}",
               doc["summary"]["total_allocs"] == want)
    elif kind == "processes":
        used = [x["file"] for x in doc["merged_from"] if x["used"]]
        expect(f"used {used}, expected the two exit profiles", len(used) == 2
               and all(not u.endswith(".1") for u in used))
        figures(s, "site_each", alloc_count=40, allocs=40, total_size=4000, bytes=4000)
        figures(s, "site_big", alloc_count=2, total_size=40000, live_count=2, live_size=40000,
                min_size=10000, max_size=30000)
        figures(s, "site_small_only", alloc_count=3, total_size=150, live_size=0)
        figures(s, "site_large_only", alloc_count=2, total_size=140, live_size=140)
        want = totals(doc, sys.argv[3:])
        expect(f"total_allocs {doc['summary']['total_allocs']}, expected {want}",
               doc["summary"]["total_allocs"] == want)
        expect(f"summary.contexts {doc['summary']['contexts']} != {len(doc['contexts'])}",
               doc["summary"]["contexts"] == len(doc["contexts"]))
    elif kind == "fork":
        expect(f"merged_from {doc['merged_from']}", len(doc["merged_from"]) == 2
               and all(x["used"] for x in doc["merged_from"]))
        figures(s, "site_each", alloc_count=12, allocs=12, total_size=1200)
        figures(s, "site_child", alloc_count=1, total_size=333, live_size=333)
        want = totals(doc, sys.argv[3:])
        expect(f"total_allocs {doc['summary']['total_allocs']}, expected {want}",
               doc["summary"]["total_allocs"] == want)
    elif kind == "diff":
        expect(f"diff_base {doc['diff_base']}", doc["diff_base"] is not None
               and doc["diff_base"]["contexts_only_in_base"] == 1)
        figures(s, "site_each", in_base=True, alloc_count=30, d_alloc_bytes=2000,
                d_alloc_count=20, d_inuse_bytes=0)
        figures(s, "site_big", in_base=True, total_size=30000, d_alloc_bytes=20000,
                d_alloc_count=0, d_inuse_bytes=20000, d_inuse_count=0)
        figures(s, "site_small_only", in_base=True, alloc_count=0, allocs=0,
                d_alloc_bytes=-150, d_alloc_count=-3, d_inuse_bytes=0)
        figures(s, "site_large_only", in_base=False, alloc_count=2, d_alloc_bytes=140,
                d_alloc_count=2, d_inuse_bytes=140, d_inuse_count=2)
        unchanged = [c for c in doc["contexts"] if c["in_base"] and not any(c["delta"].values())]
        expect("no context unchanged but for lifetimes: the runs differ only in the sites",
               all(not (c["frames"] and c["frames"][0]["function"].startswith("site_"))
                   for c in unchanged))
    else:
        problems.append(f"unknown kind {kind}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
