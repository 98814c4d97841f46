#!/usr/bin/env python3
"""Check heapprof-report's JSON of test/profiling/pool_api.c against the numbers the program is
written to produce. Usage: check_pool.py JSON_FILE [access]
Contexts are summed by their first frame in a site_* function (pool objects' innermost frame
is the pool's pool_get). With "access", pool objects of an instrumented build must have access
counts. Prints one line per failed expectation and exits 1 if there was any."""
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree
from report_json import expect, load, problems  # noqa: E402


def by_site(doc):
    sites = {}
    for c in doc["contexts"]:
        fns = [f["function"].split("(")[0] for f in c["frames"]]
        site = next((f for f in fns if f.startswith("site_")), None)
        if site is None:
            continue
        s = sites.setdefault(site, {"contexts": 0, "pool": set(), "inner": set()})
        s["contexts"] += 1
        s["pool"].add(c["pool"])
        s["inner"].add(fns[0])
        for k, v in c.items():
            if isinstance(v, bool) or not isinstance(v, int):
                continue
            if k.startswith("min_"):
                s[k] = min(s.get(k, v), v)
            elif k.startswith("max_") and not k.startswith("max_live_"):
                s[k] = max(s.get(k, v), v)
            else:
                s[k] = s.get(k, 0) + v
    return sites


def site(sites, name, pool, inner, **want):
    s = sites.get(name)
    if s is None:
        problems.append(f"{name}: no context with a frame in {name}")
        return None
    expect(f"{name}: pool flags {s['pool']}, expected {{{pool}}}", s["pool"] == {pool})
    expect(f"{name}: innermost frames {s['inner']}, expected {{{inner}}}", s["inner"] == {inner})
    for k, v in want.items():
        expect(f"{name}: {k} is {s.get(k)}, expected {v}", s.get(k) == v)
    return s


def main():
    doc = load(sys.argv[1])
    access = "access" in sys.argv[2:]
    sites = by_site(doc)
    site(sites, "site_pool_short", True, "pool_get", alloc_count=1000, allocs=1000,
         total_size=48000, min_size=48, max_size=48, live_count=0, live_size=0)
    site(sites, "site_pool_leak", True, "pool_get", alloc_count=300, total_size=6000,
         live_count=300, live_size=6000, max_live_count=300, max_live_size=6000)
    site(sites, "site_pool_destroyed", True, "pool_get", alloc_count=200, total_size=8000,
         live_count=0, max_live_count=200)
    s = site(sites, "site_pool_long", True, "pool_get", alloc_count=10, total_size=40960,
             live_count=0, max_live_count=10)
    if s:
        expect(f"site_pool_long: min_lifetime_ms {s['min_lifetime_ms']} < 95", s["min_lifetime_ms"] >= 95)
        expect(f"site_pool_long: max_lifetime_ms {s['max_lifetime_ms']} > 2000", s["max_lifetime_ms"] <= 2000)
    site(sites, "site_pool_resize", True, "pool_get", alloc_count=100, total_size=12800,
         live_count=0)
    site(sites, "site_pool_shrink", True, "site_pool_shrink", alloc_count=100, total_size=6400,
         live_count=0, min_size=64, max_size=64)
    site(sites, "site_pool_peak", True, "pool_get", alloc_count=100, total_size=1000000,
         live_count=0, max_live_count=100, max_live_size=1000000, peak_live_count=100,
         peak_live_size=1000000)
    site(sites, "site_pool_thread", True, "pool_get", alloc_count=1000, total_size=16000,
         live_count=0, min_size=16, max_size=16)
    site(sites, "site_malloc", False, "site_malloc", alloc_count=500, total_size=50000, live_count=0)
    site(sites, "site_malloc_thread", False, "site_malloc_thread", alloc_count=200,
         total_size=40000, live_count=0)
    sm = doc["summary"]
    expect(f"summary.pool_unknown_frees {sm.get('pool_unknown_frees')}, expected 3",
           sm.get("pool_unknown_frees") == 3)
    expect(f"summary.pool_dropped {sm.get('pool_dropped')}, expected 0", sm.get("pool_dropped") == 0)
    # The 100 objects of site_pool_peak (with the 300 leaked ones and a few malloc'd blocks)
    # make the peak; the pool's chunks are mmap'd, not counted.
    expect(f"summary.peak_live_size {sm['peak_live_size']} not in [1000000, 1100000]",
           1000000 <= sm["peak_live_size"] <= 1100000)
    if access:
        for name in ("site_pool_short", "site_pool_long", "site_pool_thread"):
            s = sites.get(name)
            expect(f"{name}: no access counts", s is not None and s.get("total_access_count", 0) > 0)
    for p in problems:
        print(p)
    return 1 if problems else 0


sys.exit(main())
