#!/usr/bin/env python3
"""Checks heapprof-report's export formats against its JSON report of the same profile, number
for number, as the consuming tool reads them (used by the cases report-pprof and report-dhat):

  check_export.py pprof RAW JSON [--default TYPE] [--site FUNC=V,V,...]...
      RAW is `go tool pprof -raw` of the pprof output: every context of the JSON with a figure
      is one sample, labelled with its context id, whose values, "bytes" label and frames
      (the locations' lines, inlined functions first) are the JSON's.
  check_export.py dhat DHAT JSON [--acc FUNC=V]...
      DHAT is the --format dhat file: the fields dh_view.js requires, and per program point the
      figures of the JSON contexts with its frames.
  check_export.py page DHAT DIR
      Writes DIR/data.js, the DHAT file as a JavaScript string for test/integration/dh_view.html.
Exits 1 with one line per problem (at most 10)."""
import json
import re
import sys


def load_report(path):
    """heapprof-report's JSON with each context's frames resolved from the frame table
    (schema 2: contexts list indices into frame_table)."""
    js = json.load(open(path))
    for c in js["contexts"]:
        c["frames"] = [js["frame_table"][i] for i in c["frames"]]
    return js


TYPES = ["alloc_objects", "alloc_space", "inuse_objects", "inuse_space", "peak_objects",
         "peak_space", "accesses", "lifetime"]


def expected_values(c):
    live = c["allocs"] or c["bytes"]
    return [c["allocs"] if live else c["alloc_count"], c["bytes"] if live else c["total_size"],
            c["live_count"], c["live_size"], c["peak_live_count"], c["peak_live_size"],
            c["total_access_count"], c["total_lifetime_ms"]]


def parse_raw(path):
    """Sample types, the default one, samples (values, location ids, labels) and locations."""
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    types, default, samples, locs = [], None, [], {}
    section, cur = None, None
    for ln in lines:
        if ln in ("Samples:", "Locations", "Mappings"):
            section = ln
            continue
        if section == "Samples:":
            if not types:
                for t in ln.split():
                    name = t.split("/")[0]
                    if t.endswith("[dflt]"):
                        default = name
                    types.append(name)
                continue
            m = re.match(r"^\s*(-?\d+(?:\s+-?\d+)*):((?:\s+\d+)*)\s*$", ln)
            if m:
                cur = {"values": [int(v) for v in m.group(1).split()],
                       "locs": [int(x) for x in m.group(2).split()], "labels": {}}
                samples.append(cur)
            elif cur is not None:
                for k, v in re.findall(r"(\w+):\[([^\]]*)\]", ln):
                    cur["labels"][k] = int(v.split()[0])
        elif section == "Locations":
            m = re.match(r"^\s*(\d+): (0x[0-9a-f]+) M=\d+ ?(.*)$", ln)
            if m:
                cur_loc = locs.setdefault(int(m.group(1)), [])
                if m.group(3).strip():
                    cur_loc.append(m.group(3).split()[0])
            elif ln.startswith("             ") and ln.strip():
                cur_loc.append(ln.split()[0])
    return types, default, samples, locs


def check_pprof(args, errs):
    raw, js = args[0], load_report(args[1])
    types, default, samples, locs = parse_raw(raw)
    if types != TYPES:
        errs.append("sample types %s, expected %s" % (types, TYPES))
        return
    opts = args[2:]
    for i in range(0, len(opts), 2):
        if opts[i] == "--default" and default != opts[i + 1]:
            errs.append("default sample type %s, expected %s" % (default, opts[i + 1]))
    by_ctx = {s["labels"].get("context"): s for s in samples}
    want = [c for c in js["contexts"] if any(expected_values(c))]
    if len(samples) != len(want):
        errs.append("%d samples, the JSON has %d contexts with figures" % (len(samples), len(want)))
    for c in want:
        s = by_ctx.get(c["context_id"])
        if s is None:
            errs.append("context %d: no sample" % c["context_id"])
            continue
        if s["values"] != expected_values(c):
            errs.append("context %d: values %s, JSON %s" % (c["context_id"], s["values"],
                                                            expected_values(c)))
        n = expected_values(c)[0]
        if n and s["labels"].get("bytes") != expected_values(c)[1] // n:
            errs.append("context %d: bytes label %s" % (c["context_id"], s["labels"].get("bytes")))
        got = [f for loc in s["locs"] for f in locs.get(loc, [])]
        # pprof -raw prints a function's name up to its first blank: compare that much
        exp = [f["function"].split()[0] for f in c["frames"] if f["function"]]
        if got != exp:
            errs.append("context %d: frames %s, JSON %s" % (c["context_id"], got[:6], exp[:6]))
    for i in range(0, len(opts), 2):
        if opts[i] != "--site":
            continue
        func, vals = opts[i + 1].split("=")
        vals = [int(v) for v in vals.split(",")]
        hits = [s for s in samples if s["locs"] and locs.get(s["locs"][0]) and
                locs[s["locs"][0]][0] == func]
        if len(hits) != 1 or hits[0]["values"][:len(vals)] != vals:
            errs.append("site %s: %s, expected %s" % (func, [h["values"] for h in hits], vals))


DHAT_TOP = ["dhatFileVersion", "mode", "verb", "bklt", "bkacc", "tu", "Mtu", "cmd", "pid", "te",
            "pps", "ftbl", "tg", "tuth"]


def frame_key(s):
    m = re.match(r"^(0x[0-9a-f]+): (.*?) \((?:in )?[^()]*\)$", s) or re.match(r"^(0x[0-9a-f]+): (.*)$", s)
    return (m.group(1), m.group(2)) if m else (s, "")


def expand_acc(acc):
    out, i = [], 0
    while i < len(acc):
        if acc[i] < 0:
            out += [acc[i + 1]] * -acc[i]
            i += 2
        else:
            out.append(acc[i])
            i += 1
    return out


def check_dhat(args, errs):
    d, js = json.load(open(args[0])), load_report(args[1])
    for f in DHAT_TOP:
        if f not in d:
            errs.append("missing field %s" % f)
    if errs:
        return
    if d["dhatFileVersion"] != 2 or d["mode"] != "heap" or d["ftbl"][0] != "[root]":
        errs.append("version %s, mode %s, ftbl[0] %s" % (d["dhatFileVersion"], d["mode"], d["ftbl"][0]))
    pr = js["process"]
    if d["pid"] != pr["pid"] or d["te"] != max(pr["duration_ms"], 1) * 1000 or \
            d["tg"] != js["summary"]["peak_ms"] * 1000 or d["cmd"] != " ".join(pr["command_line"]):
        errs.append("header: pid %s te %s tg %s cmd %s" % (d["pid"], d["te"], d["tg"], d["cmd"]))
    access = js.get("access") is not None
    if d["bkacc"] != access:
        errs.append("bkacc %s with access data %s" % (d["bkacc"], access))
    groups = {}
    for c in js["contexts"]:
        key = tuple((f["address"], f["function"] or "???") for f in c["frames"])
        groups.setdefault(key, []).append(c)
    seen = set()
    fields = ["tb", "tbk", "tl", "mb", "mbk", "gb", "gbk", "eb", "ebk"] + (["rb", "wb"] if access else [])
    for pp in d["pps"]:
        key = tuple(frame_key(d["ftbl"][i]) for i in pp["fs"])
        if key in seen:
            errs.append("two program points with frames %s" % (key[:2],))
        seen.add(key)
        cs = groups.get(key)
        if not cs:
            errs.append("program point %s: no JSON context has these frames" % (key[:2],))
            continue
        ev = [expected_values(c) for c in cs]
        want = {"tb": sum(e[1] for e in ev), "tbk": sum(e[0] for e in ev),
                "tl": 1000 * sum(c["total_lifetime_ms"] for c in cs),
                "mb": sum(c["max_live_size"] for c in cs), "mbk": sum(c["max_live_count"] for c in cs),
                "gb": sum(c["peak_live_size"] for c in cs), "gbk": sum(c["peak_live_count"] for c in cs),
                "eb": sum(c["live_size"] for c in cs), "ebk": sum(c["live_count"] for c in cs),
                "rb": 8 * sum(c["total_read_count"] for c in cs),
                "wb": 8 * sum(c["total_write_count"] for c in cs)}
        for f in fields:
            if pp.get(f) != want[f]:
                errs.append("program point %s: %s %s, JSON %s" % (key[0], f, pp.get(f), want[f]))
        if "acc" in pp and len(expand_acc(pp["acc"])) != cs[0]["max_size"]:
            errs.append("program point %s: acc of %d bytes, blocks of %d" %
                        (key[0], len(expand_acc(pp["acc"])), cs[0]["max_size"]))
    n_groups = sum(1 for k, cs in groups.items() if any(expected_values(c)[:2]) or
                   any(c["live_size"] for c in cs))
    if len(d["pps"]) != n_groups:
        errs.append("%d program points, %d stacks with figures in the JSON" % (len(d["pps"]), n_groups))
    opts = args[2:]
    for i in range(0, len(opts), 2):
        if opts[i] != "--acc":
            continue
        func, val = opts[i + 1].split("=")
        hits = [pp for pp in d["pps"] if pp["fs"] and frame_key(d["ftbl"][pp["fs"][0]])[1] == func]
        accs = [sorted(set(expand_acc(pp.get("acc", [])))) for pp in hits]
        if accs != [[int(val)]]:
            errs.append("acc of %s: values %s, expected all %s" % (func, accs, val))


def write_page_data(args):
    text = open(args[0], encoding="utf-8").read()
    with open(args[1] + "/data.js", "w", encoding="utf-8") as f:
        f.write("var HP_DHAT = %s;\n" % json.dumps(text))


def main():
    cmd, args, errs = sys.argv[1], sys.argv[2:], []
    if cmd == "page":
        write_page_data(args)
        return 0
    {"pprof": check_pprof, "dhat": check_dhat}[cmd](args, errs)
    for e in errs[:10]:
        print(e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
