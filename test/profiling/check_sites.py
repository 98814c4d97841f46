#!/usr/bin/env python3
"""Check heapprof-report's JSON for the test programs in test/profiling against the numbers
those programs are written to produce. Usage: check_sites.py KIND JSON_FILE [EXTRA...]
KIND: exit | api | signal | child | cxx | evict | fork_exec_rounds | fork_threads | stacks | unload | reload | sigdump |
interval | interval_child | forked_exit | vfork_exit | quick_exit | many_threads |
many_threads_truncated | cancel | ext_api | mi_api | killed | killed_early | vfork_kill |
drop_privs_exit | drop_privs_exec | drop_privs_evict | drop_privs_chroot | sandbox_prctl |
sandbox_syscall | sandbox_tsync | sandbox_evict | spool_copy | filtered | sanitized | asan_lib | peak_kill | rjem | rjem_off |
ctor_alloc | handler | align | same_depth.
Prints one line per failed expectation and exits 1 if there was any."""
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the tree
from report_json import expect, load, problems  # noqa: E402

MiB = 1 << 20


def by_site(doc):
    """Sum the contexts whose innermost frame is in each site_* function."""
    sites = {}
    for c in doc["contexts"]:
        if not c["frames"]:
            continue
        fn = c["frames"][0]["function"]
        if not fn.startswith("site_"):
            continue
        name = fn.split("(")[0]
        s = sites.setdefault(name, {"contexts": 0})
        s["contexts"] += 1
        for k, v in c.items():
            if isinstance(v, int):
                if k.startswith("max_live_"):
                    s[k] = s.get(k, 0) + v  # a site's contexts are live at the same time here
                elif k.startswith("min_"):
                    s[k] = min(s.get(k, v), v)
                elif k.startswith("max_"):
                    s[k] = max(s.get(k, v), v)
                else:
                    s[k] = s.get(k, 0) + v
    return sites


def site(sites, name, **want):
    s = sites.get(name)
    if s is None:
        problems.append(f"{name}: no context whose innermost frame is {name}")
        return None
    for k, v in want.items():
        if s.get(k) != v:
            problems.append(f"{name}: {k} is {s.get(k)}, expected {v}")
    return s


def branches_evicted(doc, sites):
    """site_branches from 2,048 stacks, through a table small enough to evict most of them."""
    site(sites, "site_branches", contexts=2048, alloc_count=2048, total_size=2048 * 64,
         live_count=0)
    expect("no record was evicted (hib_table_size had no effect?)",
           doc["summary"]["evicted_hibs"] > 1024)


def check_c(doc, kind):
    sites = by_site(doc)
    site(sites, "site_short", alloc_count=1000, allocs=1000, total_size=100000, min_size=100,
         max_size=100, live_count=0, live_size=0)
    site(sites, "site_leak", alloc_count=500, allocs=500, total_size=150000, live_count=500,
         live_size=150000, max_live_count=500, max_live_size=150000, min_size=300, max_size=300)
    s = site(sites, "site_long_alloc", alloc_count=10, total_size=40960, live_count=0)
    if s:
        # 300 ms of sleep; the clock ticks in whole ms of a coarse clock (a few ms).
        expect(f"site_long_alloc: min_lifetime_ms {s['min_lifetime_ms']} < 290", s["min_lifetime_ms"] >= 290)
        expect(f"site_long_alloc: max_lifetime_ms {s['max_lifetime_ms']} > 2000", s["max_lifetime_ms"] <= 2000)
        expect("site_long_alloc: total_lifetime_ms not ~10x min",
               10 * s["min_lifetime_ms"] <= s["total_lifetime_ms"] <= 10 * s["max_lifetime_ms"])
    site(sites, "site_aligned", alloc_count=100, total_size=25600, live_count=0)
    site(sites, "site_memalign_leak", alloc_count=20, total_size=20000, live_count=20, live_size=20000)
    site(sites, "site_realloc", alloc_count=9, total_size=8176, min_size=16, max_size=4096, live_count=0)
    site(sites, "site_thread", alloc_count=4000, total_size=192000, live_count=0, contexts=1)
    site(sites, "site_peak", alloc_count=10, total_size=10 * MiB, live_count=0, max_live_size=10 * MiB,
         max_live_count=10, peak_live_size=10 * MiB, peak_live_count=10)
    site(sites, "site_after_peak", alloc_count=5, total_size=5 * MiB, max_live_size=5 * MiB,
         peak_live_size=0, peak_live_count=0)
    summ = doc["summary"]
    expect(f"peak_live_size {summ['peak_live_size']} not in [10 MiB + 170000, 11 MiB)",
           10 * MiB + 170000 <= summ["peak_live_size"] < 11 * MiB)
    expect("site_child present in the parent's profile", "site_child" not in sites)
    reason = doc["process"]["dump_reason"]
    expect(f"dump_reason {reason}, expected {kind}", reason == kind)
    expect("foreign or double frees reported", summ["foreign_frees"] == 0 and summ["double_frees"] == 0)
    expect(f"metadata_resident {summ['metadata_resident']} not in (0, metadata_bytes {summ['metadata_bytes']}]",
           0 < summ["metadata_resident"] <= summ["metadata_bytes"])


def check_deep(doc):
    """Every site's stack reaches its caller: main, or thread_main for the threads."""
    for c in doc["contexts"]:
        names = [f["function"] for f in c["frames"]]
        if not names or not names[0].startswith("site_"):
            continue
        want = "thread_main" if names[0] == "site_thread" else "main"
        expect(f"{names[0]}: stack {names[:6]} does not reach {want}", want in names)


def check_lines(doc, source):
    """The innermost frame of every site_* context names its source file and a line: DWARF
    from gcc (which emits .debug_aranges) and from clang (which does not) alike."""
    for c in doc["contexts"]:
        if not c["frames"] or not c["frames"][0]["function"].startswith("site_"):
            continue
        f = c["frames"][0]
        expect(f"{f['function']}: file {f['file']!r} line {f['line']}, expected {source}:N",
               f["file"].endswith(source) and f["line"] > 0)


def main():
    kind, path = sys.argv[1], sys.argv[2]
    doc = load(path)
    if "deep" in sys.argv[3:]:
        check_deep(doc)
    if kind in ("exit", "api", "signal"):
        check_c(doc, kind)
        check_lines(doc, "sites.c")
    elif kind == "child":
        parent = int(sys.argv[3])
        sites = by_site(doc)
        site(sites, "site_child", alloc_count=7, total_size=7 * 777, live_count=0)
        expect(f"forked_from {doc['process']['forked_from']}, expected {parent}",
               doc["process"]["forked_from"] == parent)
        expect("child dump_reason not exit", doc["process"]["dump_reason"] == "exit")
    elif kind == "cxx":
        sites = by_site(doc)
        site(sites, "site_new_array", alloc_count=300, total_size=30000, live_count=0)
        site(sites, "site_new_aligned", alloc_count=200, total_size=38400, live_count=0)
        site(sites, "site_new_nothrow_leak", alloc_count=50, total_size=2000, live_count=50, live_size=2000)
        check_lines(doc, "sites_cxx.cc")
    elif kind in ("killed", "killed_early"):
        signum = int(sys.argv[3])
        sites = by_site(doc)
        site(sites, "site_short", alloc_count=1000, total_size=100000, live_count=0)
        site(sites, "site_leak", alloc_count=500, total_size=150000, live_count=500, live_size=150000)
        if kind == "killed":
            s = site(sites, "site_loop")
            if s:
                expect(f"site_loop: {s['live_count']} blocks live, expected at most 1", s["live_count"] <= 1)
                expect("site_loop: no allocations", s["alloc_count"] > 0)
        proc, summ = doc["process"], doc["summary"]
        expect(f"dump_reason {proc['dump_reason']}, expected killed", proc["dump_reason"] == "killed")
        expect(f"killed_by {summ['killed_by']}, expected {signum}", summ["killed_by"] == signum)
    elif kind == "vfork_kill":
        sites = by_site(doc)
        site(sites, "site_after", alloc_count=100, total_size=6400, live_count=0)
        expect(f"dump_reason {doc['process']['dump_reason']}, expected exit",
               doc["process"]["dump_reason"] == "exit")
    elif kind == "ext_api":
        sites = by_site(doc)
        site(sites, "site_mallocx", alloc_count=300, total_size=300000, min_size=1000, max_size=1000,
             live_count=0)
        site(sites, "site_arena_leak", alloc_count=40, total_size=20000, live_count=40, live_size=20000)
        site(sites, "site_rallocx", alloc_count=9, total_size=8176, min_size=16, max_size=4096,
             live_count=0)
        site(sites, "site_malloc_dallocx", alloc_count=200, total_size=20000, live_count=0)
        summ = doc["summary"]
        expect("foreign or double frees reported", summ["foreign_frees"] == 0 and summ["double_frees"] == 0)
        check_lines(doc, "ext_api.c")
    elif kind == "mi_api":
        sites = by_site(doc)
        site(sites, "site_mi_malloc", alloc_count=300, total_size=300000, min_size=1000, max_size=1000,
             live_count=0)
        site(sites, "site_mi_aligned_at", alloc_count=100, total_size=50000, live_count=0)
        site(sites, "site_malloc_mi_free", alloc_count=200, total_size=20000, live_count=0)
        site(sites, "site_rezalloc", alloc_count=9, total_size=8176, min_size=16, max_size=4096,
             live_count=0)
        site(sites, "site_strdup_leak", alloc_count=50, total_size=600, live_count=50, live_size=600)
        site(sites, "site_heap_destroyed", alloc_count=40, total_size=10000, live_count=0)
        site(sites, "site_heap_deleted", alloc_count=30, total_size=2880, live_count=30, live_size=2880)
        site(sites, "site_deferred", alloc_count=100000, total_size=10000000, live_count=0)
        summ = doc["summary"]
        expect("double frees reported", summ["double_frees"] == 0)
        check_lines(doc, "mi_api.c")
    elif kind == "fork_threads":
        # fork_threads.c: ROLE (argv[3]) parent | dump (the child that allocates and dumps) |
        # dump-exit (its exit profile, after its own threads) | fork (the child that only
        # forks) | grandchild; argv[4]: the pid it was forked from.
        role = sys.argv[3]
        sites = by_site(doc)
        site(sites, "site_worker_freed", contexts=1, alloc_count=4000, total_size=4000 * 48,
             live_count=0)
        if role == "parent":
            site(sites, "site_worker_live", alloc_count=100, total_size=100000, live_count=0)
            site(sites, "site_handoff", alloc_count=50, total_size=5000, live_count=0,
                 max_live_count=50)
        else:
            site(sites, "site_worker_live", contexts=1, alloc_count=100, total_size=100000,
                 live_count=100, max_live_count=100)
            expect(f"forked_from {doc['process']['forked_from']}, expected {sys.argv[4]}",
                   doc["process"]["forked_from"] == int(sys.argv[4]))
        if role == "dump-exit":
            # six threads of 20,000 blocks each, every one freed (by the thread next door or at
            # the end): made on the caches the first dump folded, each used by one thread
            site(sites, "site_child_thread", alloc_count=120000, total_size=120000 * 64, live_count=0)
            role = "dump"
        elif role == "dump":
            expect("site_child_thread before the child's threads", "site_child_thread" not in sites)
        if role == "dump":
            # 50 blocks from the parent, all freed by another thread, and one more: never more
            # than 50 live at once.
            site(sites, "site_handoff", alloc_count=51, total_size=5100, live_count=1,
                 max_live_count=50)
            site(sites, "site_child", alloc_count=7, total_size=7 * 777, live_count=0)
        elif role in ("fork", "grandchild"):
            site(sites, "site_handoff", alloc_count=50, total_size=5000, live_count=0,
                 max_live_count=50)
            if role == "grandchild":
                site(sites, "site_child", alloc_count=7, total_size=7 * 777, live_count=0)
            else:
                expect("site_child in the child that only forked", "site_child" not in sites)
    elif kind == "fork_exec_rounds":
        # fork_exec.c 128: pick() reached through 2,048 paths of via0/via1, one block of 32 B each.
        picks = [c for c in doc["contexts"] if c["frames"] and c["frames"][0]["function"] == "pick"]
        expect(f"{len(picks)} contexts from pick, expected 2048", len(picks) == 2048)
        wrong = [c["alloc_count"] for c in picks if c["alloc_count"] != 1 or c["total_size"] != 32]
        expect(f"pick contexts with other than one block of 32 B: {wrong[:5]}", not wrong)
        expect("no evictions happened", doc["summary"]["evicted_hibs"] > 1024)
    elif kind == "evict":
        # rec(depth, n=depth) for depth 1..200, `rounds` rounds (argv[3], default 3): depth d
        # allocates rounds*d blocks of 10 B.
        rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
        counts = {}
        for c in doc["contexts"]:
            if c["frames"] and c["frames"][0]["function"] == "rec":
                depth = sum(1 for f in c["frames"] if f["function"] == "rec")
                counts[depth] = counts.get(depth, 0) + c["alloc_count"]
                expect(f"depth {depth}: total_size {c['total_size']} != 10 * alloc_count",
                       c["total_size"] == 10 * c["alloc_count"])
        expect(f"{len(counts)} recursion depths, expected 200", len(counts) == 200)
        wrong = [d for d in counts if counts[d] != rounds * d]
        expect(f"depths with wrong counts: {wrong[:5]}", not wrong)
        expect("no evictions happened", doc["summary"]["evicted_hibs"] > 0)
    elif kind == "same_depth":
        # argv[3]: same_depth's output, "outer dyn caller count" lines. dyn 1 and 2 differ only
        # in how much dyn_frame allocates on its stack: the same stack, one class.
        want_n, want_b = {}, {}
        for line in open(sys.argv[3]):
            o, dy, ca, n = (int(v) for v in line.split())
            key = (o, min(dy, 1), ca)
            want_n[key] = want_n.get(key, 0) + n
            want_b[key] = want_b.get(key, 0) + n * 16 * (1 + o * 6 + dy * 2 + ca)
        got_n, got_b = {}, {}
        for c in doc["contexts"]:
            names = [f["function"] for f in c["frames"]]
            if not names or names[0] != "leaf":
                continue
            key = (int("outer_y" in names), int("dyn_frame" in names), int("caller_b" in names))
            expect(f"a context of leaf with {'caller_a' in names} / {'caller_b' in names} "
                   f"caller_a / caller_b and {'outer_x' in names} / {'outer_y' in names} "
                   f"outer_x / outer_y: {names[:8]}",
                   ("caller_a" in names) != ("caller_b" in names) and
                   ("outer_x" in names) != ("outer_y" in names))
            got_n[key] = got_n.get(key, 0) + c["alloc_count"]
            got_b[key] = got_b.get(key, 0) + c["total_size"]
        for key in sorted(want_n):
            expect(f"path {key}: {got_n.get(key, 0)} allocations of {got_b.get(key, 0)} bytes, "
                   f"expected {want_n[key]} of {want_b[key]}",
                   got_n.get(key, 0) == want_n[key] and got_b.get(key, 0) == want_b[key])
    elif kind == "stacks":
        n = sum(c["alloc_count"] for c in doc["contexts"]
                if c["frames"] and c["frames"][0]["function"] == "co_alloc")
        expect(f"co_alloc: {n} allocations on coroutine stacks, expected 2000", n == 2000)
    elif kind == "handler":
        # argv[3], argv[4]: the handler's ticks and main's blocks (handler_allocs.c); argv[5]
        # "strict": not one allocation went unrecorded.
        ticks, blocks = int(sys.argv[3]), int(sys.argv[4])
        sites = by_site(doc)
        site(sites, "site_keep", alloc_count=ticks, live_count=ticks, total_size=72 * ticks,
             min_size=72, max_size=72)
        site(sites, "site_temp", alloc_count=ticks, live_count=0, total_size=56 * ticks)
        site(sites, "site_pass", alloc_count=ticks, live_count=0, total_size=88 * ticks)
        site(sites, "site_main", alloc_count=blocks, live_count=0, total_size=40 * blocks)
        # No frame of the shim's: a handler that interrupted it outside a recording (the cfi
        # walk went on through the signal frame into hp_profile_free, free_impl, hp_free)
        shim = [c for c in doc["contexts"]
                if any("libheapprof_shim" in (f["module"] or "") for f in c["frames"])]
        expect(f"{sum(c['alloc_count'] for c in shim)} allocations with frames of the shim's, "
               f"as in {[f['function'] for f in shim[0]['frames']] if shim else None}", not shim)
        if len(sys.argv) > 5 and sys.argv[5] == "strict":
            n = doc["summary"]["unprofiled_allocs"]
            expect(f"{n} allocations not recorded", n == 0)
    elif kind == "tree":
        # argv[3]: the profile's size in bytes. Path digits from the frames: the outermost
        # tree_f is the path's lowest base-4 digit (tree.c).
        got = {}
        for c in doc["contexts"]:
            names = [f["function"] for f in c["frames"]]
            if not names or names[0] != "tree_leaf":
                continue
            digits = [int(n[len("tree_f"):]) for n in names if n.startswith("tree_f")]
            path = sum(d << (2 * i) for i, d in enumerate(reversed(digits)))
            expect(f"path {path}: {len(digits)} levels in {names}", len(digits) == 6)
            expect(f"path {path}: stack does not reach main through ten tree_deep: {names}",
                   names.count("tree_deep") == 10 and "main" in names)
            expect(f"path {path}: two contexts", path not in got)
            got[path] = c
            expect(f"path {path}: alloc_count {c['alloc_count']} total_size {c['total_size']} "
                   f"live_count {c['live_count']}, expected 3, {3 * (path + 1)}, 1",
                   c["alloc_count"] == 3 and c["total_size"] == 3 * (path + 1)
                   and c["live_count"] == 1 and c["min_size"] == path + 1)
        expect(f"{len(got)} paths, expected 4096", len(got) == 4096)
        size = int(sys.argv[3])
        # Version 1 wrote about 650 bytes a context here (26 frames, LIVE, two HIBs).
        expect(f"profile of {size} bytes: {size / 4096:.0f} a context, expected under 200",
               size < 4096 * 200 + 65536)
    elif kind == "jit_frames":
        hits = [c for c in doc["contexts"] if c["frames"] and c["frames"][0]["function"] == "jit_callee"]
        n = sum(c["alloc_count"] for c in hits)
        expect(f"jit_callee: {n} allocations, expected 300", n == 300)
        for c in hits:
            names = [f["function"] for f in c["frames"]]
            # jit_callee, the generated code (no symbol), then main
            expect(f"jit_callee's stack does not go on through the generated code to main: {names[:6]}",
                   len(names) > 2 and names[2] == "main")
    elif kind in ("many_threads", "many_threads_truncated"):
        sites = by_site(doc)
        # 800 threads x 100 blocks, 100 threads of each size 40..47
        site(sites, "site_many", alloc_count=80000, total_size=100 * 100 * sum(range(40, 48)),
             min_size=40, max_size=47, live_count=0)
        meta = doc["summary"]["metadata_bytes"]
        expect(f"metadata_bytes {meta >> 20} MiB for 800 threads, expected under 256 MiB",
               meta < 256 << 20)
        if kind == "many_threads_truncated":
            # stack_depth=2: every stack is deeper (site_many, thread_main, start_thread, ...)
            summ = doc["summary"]
            expect(f"truncated_stacks {summ['truncated_stacks']}, expected every allocation "
                   f"({summ['total_allocs']})", summ["truncated_stacks"] == summ["total_allocs"])
    elif kind == "align":
        # align_check.c: four aligned allocations per (alignment, size), all freed.
        n = total = 0
        for al in (32, 64, 128, 256, 512, 1024, 4096, 8192, 65536):
            sz = 1
            while sz < 60000:
                n += 4
                total += 3 * sz + (sz + al - 1) // al * al
                sz = sz * 3 + 1
        got = [c for c in doc["contexts"] if c["frames"] and c["frames"][0]["function"] == "main"
               and c["frames"][0]["file"].endswith("align_check.c")]
        expect(f"allocations from main: {sum(c['alloc_count'] for c in got)}, expected {n}",
               sum(c["alloc_count"] for c in got) == n)
        expect(f"bytes from main: {sum(c['total_size'] for c in got)}, expected {total}",
               sum(c["total_size"] for c in got) == total)
        expect("blocks from main still live", sum(c["live_count"] for c in got) == 0)
    elif kind == "cancel":
        n = int(sys.argv[3])
        sites = by_site(doc)
        site(sites, "site_cancel", alloc_count=n, total_size=48 * n, min_size=48, max_size=48,
             live_count=0)
    elif kind == "unload":
        hits = [c for c in doc["contexts"] if c["total_size"] == 4242]
        expect("no context for the plugin's 4242-byte block", len(hits) == 1)
        if hits:
            f = hits[0]["frames"][0] if hits[0]["frames"] else {}
            expect(f"plugin frame is {f.get('function')!r} in {f.get('module')!r}",
                   f.get("function") == "plugin_alloc" and f.get("module", "").endswith("libunload_plugin.so"))
    elif kind == "sigdump":
        sites = by_site(doc)
        site(sites, "site_loop", alloc_count=2048000, live_count=0,
             total_size=2048000 // 256 * sum(range(16, 16 + 256)))
    elif kind == "reload":
        for size in (1111, 2222):
            hits = [c for c in doc["contexts"] if c["total_size"] == size]
            expect(f"{len(hits)} contexts of {size} bytes, expected 1", len(hits) == 1)
            if hits:
                names = [f["function"] for f in hits[0]["frames"]][:3]
                expect(f"{size} bytes: stack {names}, expected reload_alloc, call_plugin, main",
                       names == ["reload_alloc", "call_plugin", "main"])
                module = hits[0]["frames"][0]["module"] if hits[0]["frames"] else ""
                expect(f"{size} bytes: module {module!r}, expected an absolute path",
                       module.startswith("/") and "libreload_" in module)
    elif kind == "interval_child":
        parent = int(sys.argv[3])
        proc, summ = doc["process"], doc["summary"]
        expect(f"dump_reason {proc['dump_reason']}", proc["dump_reason"] == "interval")
        expect(f"forked_from {proc['forked_from']}, expected {parent}", proc["forked_from"] == parent)
        expect("the child with its interval thread claims an exact peak (peak_slack_bytes 0)",
               summ["peak_slack_bytes"] > 0)
    elif kind == "forked_exit":
        parent = int(sys.argv[3])
        proc = doc["process"]
        expect(f"dump_reason {proc['dump_reason']}, expected exit", proc["dump_reason"] == "exit")
        expect(f"forked_from {proc['forked_from']}, expected {parent}", proc["forked_from"] == parent)
        expect("the child's profile has no allocations", doc["summary"]["total_allocs"] > 0)
    elif kind == "vfork_exit":
        sites = by_site(doc)
        site(sites, "site_before", alloc_count=100, total_size=10000, live_count=0)
        site(sites, "site_after", alloc_count=50, total_size=10000, live_count=0)
        expect(f"dump_reason {doc['process']['dump_reason']}", doc["process"]["dump_reason"] == "exit")
    elif kind == "quick_exit":
        sites = by_site(doc)
        site(sites, "site_before", alloc_count=100, total_size=10000, live_count=100)
        site(sites, "site_after", alloc_count=50, total_size=10000, live_count=0)
        expect(f"dump_reason {doc['process']['dump_reason']}", doc["process"]["dump_reason"] == "exit")
    elif kind.startswith("drop_privs_"):
        mode = kind[len("drop_privs_"):]
        sites = by_site(doc)
        reason = doc["process"]["dump_reason"]
        site(sites, "site_before", alloc_count=100, total_size=10000, live_count=0)
        if mode == "exec":
            # The profile made before the change stays: nothing after it is in it.
            expect(f"dump_reason {reason}, expected credentials", reason == "credentials")
            expect("site_after in the provisional profile", "site_after" not in sites)
        else:
            expect(f"dump_reason {reason}, expected exit", reason == "exit")
        if mode in ("exit", "chroot"):
            site(sites, "site_after", alloc_count=50, total_size=10000, live_count=0)
        if mode == "evict":
            branches_evicted(doc, sites)
    elif kind.startswith("sandbox_"):
        mode = kind[len("sandbox_"):]
        sites = by_site(doc)
        reason = doc["process"]["dump_reason"]
        expect(f"dump_reason {reason}, expected exit", reason == "exit")
        site(sites, "site_before", alloc_count=100, total_size=10000, live_count=0)
        if mode == "evict":
            branches_evicted(doc, sites)
        else:
            site(sites, "site_after", alloc_count=50, total_size=10000, live_count=0)
            site(sites, "site_thread", alloc_count=30, total_size=9000, live_count=0)
        # The stacks are whole (symbolised from the modules the provisional profile listed).
        for c in doc["contexts"]:
            fns = [f["function"] for f in c["frames"]]
            if fns and fns[0] in ("site_after", "site_thread"):
                expect(f"{fns[0]}'s stack {fns} lacks its caller",
                       len(fns) > 1 and fns[1] in ("main", "thread_main"))
    elif kind == "sanitized":
        sites = by_site(doc)
        site(sites, "site_worker", alloc_count=6000, total_size=6000 * 64, live_count=0,
             min_size=64, max_size=64)
        expect(f"backend {doc['process']['backend']}, expected patched (the runtime first)",
               doc["process"]["backend"] == "patched")
    elif kind == "asan_lib":
        site(by_site(doc), "site_lib", alloc_count=10, total_size=320, live_count=0)
    elif kind == "peak_kill":
        reason = doc["process"]["dump_reason"]
        expect(f"dump_reason {reason}, expected peak", reason == "peak")
        site(by_site(doc), "site_big", alloc_count=18, live_count=18, live_size=18 * MiB,
             min_size=MiB, max_size=MiB)
        expect(f"peak_live_size {doc['summary']['peak_live_size']}, expected 18 MiB",
               doc["summary"]["peak_live_size"] == 18 * MiB)
    elif kind in ("rjem", "rjem_off"):
        sites = by_site(doc)
        site(sites, "site_libc", alloc_count=70, total_size=70 * 24, live_count=0)
        if kind == "rjem":
            site(sites, "site_rjem", alloc_count=350, total_size=165400, live_count=0,
                 min_size=40, max_size=2000)
            summ = doc["summary"]
            expect("foreign or double frees", summ["foreign_frees"] == 0 and summ["double_frees"] == 0)
        else:
            expect("site_rjem in the profile without patch_prefixed", "site_rjem" not in sites)
    elif kind == "ctor_alloc":
        sites = by_site(doc)
        site(sites, "site_ctor_keep", alloc_count=10, total_size=10000, live_count=10, live_size=10000)
        site(sites, "site_ctor_temp", alloc_count=5, total_size=10000, live_count=0)
        site(sites, "site_main", alloc_count=7, total_size=2100, live_count=0)
        summ = doc["summary"]
        expect("foreign or double frees", summ["foreign_frees"] == 0 and summ["double_frees"] == 0)
        expect(f"backend {doc['process']['backend']}, expected patched",
               doc["process"]["backend"] == "patched")
    elif kind == "filtered":
        # filtered.c: run under an inherited filter that kills on mincore and copy_file_range.
        sites = by_site(doc)
        site(sites, "site_filtered", alloc_count=110, total_size=20000, live_count=10,
             live_size=10000, min_size=100, max_size=1000)
        site(sites, "site_thread", alloc_count=30, total_size=9000, live_count=0)
    elif kind == "spool_copy":
        # spool_copy.c: 16 threads, each once from the 2,048 stacks; the spool's records are
        # copied into API dumps and forked children (EXTRA: the dump_reason expected).
        sites = by_site(doc)
        site(sites, "site_branches", contexts=2048, alloc_count=16 * 2048,
             total_size=16 * 2048 * 64, live_count=0)
        expect(f"evicted_hibs {doc['summary']['evicted_hibs']}: the spool was hardly used",
               doc["summary"]["evicted_hibs"] > 16 * 1024)
        expect(f"dump_reason {doc['process']['dump_reason']}, expected {sys.argv[3]}",
               doc["process"]["dump_reason"] == sys.argv[3])
    elif kind == "unw_race":
        # unw_race.c: four threads, 200 blocks each of 100 bytes from one site, all one stack.
        sites = by_site(doc)
        site(sites, "site_unw_thread", contexts=1, alloc_count=800, total_size=80000, live_count=0)
        for c in doc["contexts"]:
            fns = [f["function"] for f in c["frames"]]
            if fns and fns[0] == "site_unw_thread":
                expect(f"site_unw_thread's stack {fns}: no worker frame", "worker" in fns)
    elif kind == "inlined":
        # inlined.c (argv[3]: its source): 300 blocks of 48 bytes from malloc in site_inl_leaf,
        # inlined into inl_mid, inlined into site_inl_outer; 200 of 80 from site_inl_outer's
        # own call.
        with open(sys.argv[3]) as src:
            marks = {m: i + 1 for i, text in enumerate(src) for m in ("leaf", "mid", "outer", "own")
                     if f"/* @{m} */" in text}
        sites = by_site(doc)
        site(sites, "site_inl_leaf", contexts=1, alloc_count=300, total_size=300 * 48, live_count=0)
        site(sites, "site_inl_outer", contexts=1, alloc_count=200, total_size=200 * 80, live_count=0)
        for c in doc["contexts"]:
            fr = c["frames"]
            if not fr or fr[0]["function"] not in ("site_inl_leaf", "site_inl_outer"):
                continue
            got = [(f["function"], f["line"], f["inlined"]) for f in fr[:4]]
            # main's line is not checked: the frame's name and that it was not inlined are
            main_line = got[-1][1] if got[-1][0] == "main" else 0
            if fr[0]["function"] == "site_inl_leaf":
                want = [("site_inl_leaf", marks["leaf"], True), ("inl_mid", marks["mid"], True),
                        ("site_inl_outer", marks["outer"], False), ("main", main_line, False)]
                expect(f"site_inl_leaf's frames {got}, expected {want}", got == want)
                expect("inlined frames at one address, in inlined.c",
                       len({f["address"] for f in fr[:3]}) == 1
                       and all(f["file"].endswith("inlined.c") for f in fr[:3]))
            else:
                got = got[:2]
                main_line = got[-1][1] if got[-1][0] == "main" else 0
                want = [("site_inl_outer", marks["own"], False), ("main", main_line, False)]
                expect(f"site_inl_outer's frames {got}, expected {want}", got == want)
    elif kind == "consistent":
        # One moment: the summary's counts are the sums over the contexts.
        sm, cs = doc["summary"], doc["contexts"]
        for key, field in (("total_allocs", "allocs"), ("total_bytes", "bytes"),
                           ("live_count", "live_count"), ("live_size", "live_size")):
            total = sum(c[field] for c in cs)
            expect(f"summary {key} {sm[key]}, contexts' {field} add up to {total}", sm[key] == total)
        expect(f"allocations {sm['total_allocs']} - frees {sm['total_frees']} != live {sm['live_count']}",
               sm["total_allocs"] - sm["total_frees"] == sm["live_count"])
        # Per context too: its HIBs (frees, and its live blocks folded in) count every allocation.
        empty = sum(1 for c in cs if c["allocs"] == 0)
        expect(f"{empty} contexts without allocations", empty == 0)
        differ = [c for c in cs if c["alloc_count"] != c["allocs"]]
        expect(f"{len(differ)} contexts whose alloc_count differs from allocs, e.g. "
               + ", ".join(f"{c['alloc_count']} vs {c['allocs']}" for c in differ[:3]), not differ)
        busy = sum(c["allocs"] for c in cs if c["frames"] and c["frames"][0]["function"].startswith("busy_site"))
        expect("no allocations from the busy sites", busy > 0)
    elif kind == "agree":
        # The same run under another unwinder (argv[3], its JSON): allocations per stack, the
        # stack as its functions and modules, agree but for at most argv[4] allocations
        # (what only one of the two makes: libunwind's thread-local storage, say).
        def per_stack(d):
            m = {}
            for c in d["contexts"]:
                k = tuple((f["module"], f["function"]) for f in c["frames"])
                m[k] = m.get(k, 0) + c["allocs"]
            return m
        mine, other = per_stack(doc), per_stack(load(sys.argv[3]))
        keys = set(mine) | set(other)
        off = sum(abs(mine.get(k, 0) - other.get(k, 0)) for k in keys)
        differ = [k for k in keys if mine.get(k, 0) != other.get(k, 0)]
        total = sum(mine.values())
        expect(f"{off} of {total} allocations attributed otherwise, under {len(differ)} stacks, e.g. "
               + "; ".join(f"{mine.get(k, 0)} vs {other.get(k, 0)} at "
                           + " < ".join(fn or "?" for _, fn in k[:4]) for k in differ[:3]),
               off <= int(sys.argv[4]))
        expect(f"only {total} allocations, {len(mine)} stacks", total > 100000 and len(mine) > 1000)
    elif kind == "interval":
        expect("interval dump_reason", doc["process"]["dump_reason"] == "interval")
        expect("interval dump has no contexts", len(doc["contexts"]) > 0)
        empty = sum(1 for c in doc["contexts"] if c["allocs"] == 0)
        expect(f"{empty} contexts without allocations", empty == 0)
    else:
        problems.append(f"unknown kind {kind}")
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()
