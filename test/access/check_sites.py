#!/usr/bin/env python3
"""Checks the per-site figures of a heapprof-report JSON of a program built by heapprof-cc in
MODE: for each SITE=ALLOCS,SIZE,ACCESSES,WRITES[,PERCENT], exactly one context whose first frame
is the function SITE, with ALLOCS allocations of SIZE bytes each, none live, ACCESSES accesses
and (callback and gcc builds, which count writes apart) WRITES writes per block, and, when
given, PERCENT utilisation of every block. --headerless: the summary says the blocks had no
headers. Every site whose blocks all have histograms must have all its accesses in its
histogram. Prints the differences on one line; exit status 1 if there is any.
--printed FILE: the sites a program printed as lines "site NAME blocks=N accesses=A writes=W
percent=P" (blocks of any sizes): exactly one context whose first frame is site_NAME, N
allocations, none live, A accesses and W writes in all, and P utilisation of every block.
--hist SITE: only that, for a profile written while blocks were live and freed (and maybe
before the site's first block).
Usage: check_sites.py REPORT.json MODE [--headerless] [--printed FILE] [--hist SITE]
                      SITE=ALLOCS,SIZE,ACCESSES,WRITES[,PERCENT]..."""
import json
import sys

doc = json.load(open(sys.argv[1]))
apart = sys.argv[2] != "inline"
frames = doc.get("frame_table") or []
problems = []


def function(c):
    f = c["frames"][0]
    return (frames[f] if isinstance(f, int) else f).get("function") or ""


def one_context(site, optional=False):
    """The site's one context (optional: or none); its histogram must hold all its accesses
    when every block of it has one (its largest block spans at most the histograms' granules,
    at any offset)."""
    cs = [c for c in doc["contexts"] if c["frames"] and function(c) == site]
    if optional and not cs:
        return None
    if len(cs) != 1:
        problems.append("%s: %d contexts" % (site, len(cs)))
        return None
    c = cs[0]
    bins = (doc.get("access") or {}).get("histogram_granules", 0)
    if c["total_access_count"] and (c["max_size"] + 32 + 63) // 64 <= bins:
        h = c.get("access_histogram") or {}
        got = sum(h.get("counts") or [])
        if got != c["total_access_count"]:
            problems.append("%s: histogram holds %d of %d accesses" % (site, got, c["total_access_count"]))
    return c


def check_printed(path):
    """The totals of each site a program printed."""
    lines = [ln.split() for ln in open(path) if ln.startswith("site ")]
    if not lines:
        problems.append("no site lines in %s" % path)
    for f in lines:
        site = "site_" + f[1]
        v = {k: int(x) for k, x in (kv.split("=") for kv in f[2:])}
        c = one_context(site)
        if c is None:
            continue
        got = (c["alloc_count"], c["live_count"], c["total_access_count"])
        want = (v["blocks"], 0, v["accesses"])
        if got != want:
            problems.append("%s: (blocks, live, accesses) %s, expected %s" % (site, got, want))
        if apart and (c["total_write_count"], c["total_read_count"]) != (v["writes"], v["accesses"] - v["writes"]):
            problems.append("%s: writes %s, reads %s, expected %d, %d" % (
                site, c["total_write_count"], c["total_read_count"], v["writes"],
                v["accesses"] - v["writes"]))
        if (c["min_percent_utilized"], c["max_percent_utilized"]) != (v["percent"], v["percent"]):
            problems.append("%s: utilisation %s-%s%%, expected %d%%" % (
                site, c["min_percent_utilized"], c["max_percent_utilized"], v["percent"]))


args = iter(sys.argv[3:])
for arg in args:
    if arg == "--printed":
        check_printed(next(args))
        continue
    if arg == "--hist":
        one_context(next(args), optional=True)
        continue
    if arg == "--headerless":
        if doc["summary"].get("headerless") != 1:
            problems.append("summary headerless is %s" % doc["summary"].get("headerless"))
        continue
    site, _, spec = arg.partition("=")
    v = [int(x) for x in spec.split(",")]
    n, size, acc, wr = v[:4]
    c = one_context(site)
    if c is None:
        continue
    got = (c["alloc_count"], c["total_size"], c["live_count"], c["total_access_count"],
           c["min_access_count"], c["max_access_count"])
    want = (n, n * size, 0, n * acc, acc, acc)
    if got != want:
        problems.append("%s: (allocations, bytes, live, accesses, min, max) %s, expected %s"
                        % (site, got, want))
    if apart and (c["total_write_count"], c["total_read_count"]) != (n * wr, n * (acc - wr)):
        problems.append("%s: writes %s, reads %s, expected %d, %d" % (
            site, c["total_write_count"], c["total_read_count"], n * wr, n * (acc - wr)))
    if len(v) > 4 and (c["min_percent_utilized"], c["max_percent_utilized"]) != (v[4], v[4]):
        problems.append("%s: utilisation %s-%s%%, expected %d%%" % (
            site, c["min_percent_utilized"], c["max_percent_utilized"], v[4]))
print("; ".join(problems))
sys.exit(1 if problems else 0)
