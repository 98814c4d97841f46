#!/usr/bin/env python3
"""Checks a heapprof-report JSON of neighbours.c against what the program printed: per site
(the function site_NAME of a context's first frame, exactly one context), its blocks, its
accesses in total (and as writes, in callback and gcc builds: every access is a store), none
live, and every block 100% utilised (each byte was written).
Usage: check_neighbours.py REPORT.json MODE PROGRAM.out
Prints the differences on one line; exit status 1 if there is any."""
import json
import sys

doc = json.load(open(sys.argv[1]))
apart = sys.argv[2] != "inline"
frames = doc.get("frame_table") or []
problems = []


def function(c):
    f = c["frames"][0]
    return (frames[f] if isinstance(f, int) else f).get("function") or ""


sites = 0
for line in open(sys.argv[3]):
    f = line.split()
    if not f or f[0] != "site":
        continue
    sites += 1
    name = "site_" + f[1]
    want = dict(kv.split("=") for kv in f[2:])
    n, acc = int(want["blocks"]), int(want["accesses"])
    cs = [c for c in doc["contexts"] if c["frames"] and function(c) == name]
    if len(cs) != 1:
        problems.append("%s: %d contexts" % (name, len(cs)))
        continue
    c = cs[0]
    got = (c["alloc_count"], c["live_count"], c["total_access_count"])
    if got != (n, 0, acc):
        problems.append("%s: (blocks, live, accesses) %s, expected %s" % (name, got, (n, 0, acc)))
    if apart and (c["total_write_count"], c["total_read_count"]) != (acc, 0):
        problems.append("%s: writes %s, reads %s, expected %d, 0" % (
            name, c["total_write_count"], c["total_read_count"], acc))
    if (c["min_percent_utilized"], c["max_percent_utilized"]) != (100, 100):
        problems.append("%s: utilisation %s-%s%%, expected 100%%" % (
            name, c["min_percent_utilized"], c["max_percent_utilized"]))
if sites == 0:
    problems.append("no site lines in %s" % sys.argv[3])
print("; ".join(problems))
sys.exit(1 if problems else 0)
