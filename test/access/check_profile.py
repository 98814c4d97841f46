#!/usr/bin/env python3
"""Checks the access figures of a profile of patterns.c against patterns.expected.

Usage: check_profile.py EXPECTED MODE REPORT.json HPF_ACCESS.out PATTERNS.c

REPORT.json (heapprof-report --format json) names each context's allocation site (the function
and line of its first frame); HPF_ACCESS.out (hpf_access.c) gives the context's merged HIB and
histogram. Per site of patterns.expected for MODE: 4 blocks, the accesses and writes, the
utilisation (full: every block 100%, none: 0%, T/G: every block T/G), and a histogram whose bins
add up to the accesses (every block of patterns.c has at most 64 granules), exact for the
64-byte aligned sites. Prints what differs; exit status 1 if anything does."""
import json
import re
import sys

expected_path, mode, json_path, hpf_path, source_path = sys.argv[1:6]

want = {}
for line in open(expected_path):
    f = line.split()
    if f and not f[0].startswith('#') and f[0] == mode:
        want[f[1]] = (int(f[2]), int(f[3]), f[4])

# Lines of the two allocations of site_copy, by their text.
src = open(source_path).read().split('\n')
copy_line = {}
for i, text in enumerate(src, 1):
    if 'struct s64 *s = take_new' in text:
        copy_line['copy_src'] = i
    elif 'struct s64 *d = take_new' in text:
        copy_line['copy_dst'] = i

report = json.load(open(json_path))
for c in report['contexts']:  # schema 2: frames are indices into the frame table
    c['frames'] = [report['frame_table'][i] for i in c['frames']]
site_of = {}
for c in report['contexts']:
    if not c['frames']:
        continue
    fr = c['frames'][0]
    fn = fr.get('function') or ''
    m = re.match(r'site_(\w+)$', fn)
    if not m:
        continue
    name = m.group(1)
    if name == 'copy':
        name = [k for k, v in copy_line.items() if v == fr.get('line')]
        if len(name) != 1:
            continue
        name = name[0]
    site_of.setdefault(name, []).append(c['context_id'])

figures = {}
access_line = None
summary = {}
for line in open(hpf_path):
    f = line.split()
    if f[0] == 'ctx':
        d = dict(kv.split('=', 1) for kv in f[2:])
        d['hist'] = [int(x) for x in d['hist'].split(',')] if d['hist'] else []
        figures[int(f[1])] = d
    elif f[0] == 'access':
        access_line = dict(kv.split('=', 1) for kv in f[1:])
    elif f[0] == 'summary':
        summary = dict(kv.split('=', 1) for kv in f[1:])

bad = []
mode_bit = {'inline': 1, 'callbacks': 2, 'gcc': 4}[mode]
if not access_line:
    bad.append('no ACCESS record')
elif int(access_line['modes'], 16) & 0xff != mode_bit or access_line['modules'] != '2':
    bad.append('ACCESS record: %s, want modes 0x%x and 2 modules' % (access_line, mode_bit))
if int(summary.get('shadow_resident', '0')) == 0:
    bad.append('summary: no resident shadow')
for site, (acc, wr, util) in sorted(want.items()):
    ids = site_of.get(site, [])
    if len(ids) != 1 or ids[0] not in figures:
        bad.append('%s: %d contexts with figures (%s)' % (site, len(ids), ids))
        continue
    d = figures[ids[0]]
    got = (int(d['allocs']), int(d['accesses']), int(d['writes']))
    if got != (4, acc, wr):
        bad.append('%s: allocs/accesses/writes %s, want %s' % (site, got, (4, acc, wr)))
    umin, umax = int(d['util_min']), int(d['util_max'])
    if util == 'full':
        ok = umin == umax == 100
    elif util == 'none':
        ok = umax == 0
    else:
        t, g = (int(x) for x in util.split('/'))
        ok = umin == umax == t * 100 // g
    if not ok:
        bad.append('%s: utilisation %d..%d%%, want %s' % (site, umin, umax, util))
    if sum(d['hist']) != acc:
        bad.append('%s: histogram %s adds up to %d, want %d' % (site, d['hist'], sum(d['hist']), acc))
    exact = {'half': [32, 32, 32, 32], 'copy_src': [64], 'copy_dst': [32]}
    if site in exact and acc and d['hist'] != exact[site]:
        bad.append('%s: histogram %s, want %s' % (site, d['hist'], exact[site]))

for b in bad:
    print(b)
sys.exit(1 if bad else 0)
