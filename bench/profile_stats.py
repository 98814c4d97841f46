"""Summarises heapprof profiles for bench/run.sh: reads `heapprof-report -f json` output on
stdin (one profile object or an array of them) and prints one line:
  CONTEXTS ALLOCATIONS MEAN_FRAMES_PER_ALLOCATION ALLOCATIONS_WITHOUT_STACK
so the benchmark tables can show whether the timed run recorded full stacks."""
import json
import sys


def main():
    data = json.load(sys.stdin)
    profiles = data if isinstance(data, list) else [data]
    contexts = allocs = frames = unprofiled = 0
    for p in profiles:
        s = p.get("summary", {})
        contexts += s.get("contexts", 0)
        allocs += s.get("total_allocs", 0)
        unprofiled += s.get("unprofiled_allocs", 0)
        for c in p.get("contexts", []):
            # recorded return addresses: a function inlined at one is not a frame walked
            # (schema 2: frames are indices into the profile's frame table)
            walked = [i for i in c.get("frames", []) if not p["frame_table"][i].get("inlined")]
            frames += c.get("alloc_count", 0) * len(walked)
    mean = frames / allocs if allocs else 0.0
    print("%d %d %.1f %d" % (contexts, allocs, mean, unprofiled))


if __name__ == "__main__":
    main()
