#!/usr/bin/env python3
"""Compare backend/x86.c's instruction boundaries (x86_boundaries output on stdin: name,
offset of the function in the file's load image, then boundary offsets) with objdump's
disassembly of the library. Usage: check_x86.py LIBRARY < boundaries. Prints mismatches and
a summary; exit 1 on any mismatch or when too few boundaries were checked."""
import subprocess
import sys

lib = sys.argv[1]
out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", lib], capture_output=True,
                     text=True, check=True).stdout
starts = set()
for line in out.splitlines():
    head, sep, rest = line.partition(":")
    head = head.strip()
    if sep and rest.startswith("\t") and head and all(c in "0123456789abcdef" for c in head):
        starts.add(int(head, 16))
checked = refused = bad = 0
for line in sys.stdin:
    parts = line.split()
    if len(parts) < 3:
        continue
    name, base = parts[0], int(parts[1], 16)
    if base not in starts:
        continue  # not a disassembled function start (data, or objdump disagrees on sections)
    for o in parts[2:]:
        if o == "X":
            refused += 1
            break
        checked += 1
        if base + int(o) not in starts:
            bad += 1
            print(f"{lib}: {name}: the decoder puts a boundary at +{o}, objdump does not")
            break
print(f"{lib}: {checked} boundaries checked, {bad} mismatches, {refused} refusals")
sys.exit(1 if bad or checked < 1000 else 0)
