#!/usr/bin/env python3
"""Reads what `llvm-profdata-16 show --memory --profiled-binary BIN RAW` prints (YAML) and
checks it for the report-memprof case.

  memprof_sites.py sites SHOW          one line per allocation context: its frames
                                       (symbol:line offset:column, innermost first) and MIB
  memprof_sites.py json SHOW JSON SRC  compares them with heapprof's JSON of the same profile
                                       (SRC: the source, for line offsets; '-': none); exit
                                       1 with the differences on stdout

No YAML library: the output has a fixed shape, read by indentation."""
import json
import re
import sys

MIB_FIELDS = ['AllocCount', 'TotalSize', 'MinSize', 'MaxSize', 'TotalAccessCount',
              'MinAccessCount', 'MaxAccessCount', 'TotalLifetime', 'MinLifetime', 'MaxLifetime']


def alloc_sites(path):
    """The allocation contexts by their frames, each {'frames': ((sym, off, col, inline), ...),
    'mib': {...}}. LLVM lists a context under each function of its innermost frames up to the
    first one not inlined, so a context whose p innermost frames are inlined is listed p + 1
    times: its sums are divided by that. Contexts with the same frames are added up (min/max
    over them), as their stacks differed only in frames llvm-profdata dropped."""
    listed = []
    site = frame = None
    section = None
    for line in open(path):
        indent = len(line) - len(line.lstrip(' '))
        text = line.strip()
        if indent == 4 and text in ('AllocSites:', 'CallSites:'):
            section = text
        elif indent == 2 and text == '-':
            section = None
        elif section == 'AllocSites:' and indent == 4 and text == '-':
            site = {'frames': [], 'mib': {}}
            listed.append(site)
        elif section == 'AllocSites:' and indent == 6 and text == '-':
            frame = {}
            site['frames'].append(frame)
        elif section == 'AllocSites:' and indent == 6 and text == 'MemInfoBlock:':
            frame = None
        elif section == 'AllocSites:' and indent == 8 and ':' in text:
            k, v = (s.strip() for s in text.split(':', 1))
            (frame if frame is not None else site['mib'])[k] = v
    by_frames = {}
    for s in listed:
        fr = tuple((f.get('SymbolName', f.get('Function')), int(f['LineOffset']),
                    int(f['Column']), int(f['Inline'])) for f in s['frames'])
        times = 1
        while times <= len(fr) and fr[times - 1][3]:
            times += 1
        m = {k: int(s['mib'][k]) for k in MIB_FIELDS}
        g = by_frames.get(fr)
        if g is None:
            by_frames[fr] = {k: (m[k] if k.startswith(('Min', 'Max')) else m[k] / times)
                             for k in MIB_FIELDS}
            continue
        for k in MIB_FIELDS:
            if k.startswith('Min'):
                g[k] = min(g[k], m[k])
            elif k.startswith('Max'):
                g[k] = max(g[k], m[k])
            else:
                g[k] += m[k] / times
    return [{'frames': fr, 'mib': {k: round(v) for k, v in mib.items()}}
            for fr, mib in by_frames.items()]


def cmd_sites(show):
    lines = []
    for s in alloc_sites(show):
        frames = ' < '.join('%s:%d:%d' % f[:3] for f in s['frames'])
        lines.append('%s | %s' % (frames, ' '.join('%s=%d' % (k, s['mib'][k])
                                                    for k in MIB_FIELDS[:7])))
    print('\n'.join(sorted(lines)))
    return 0


def decl_line(src, fn):
    """The line of the function's definition in the source: where `fn(` first appears."""
    for i, line in enumerate(open(src), 1):
        if re.search(r'\b%s\(' % re.escape(fn), line):
            return i
    return None


def cmd_json(show, js, src):
    """heapprof's contexts against LLVM's, both added up by their innermost frame in the
    executable that has debug information (llvm-profdata drops the others): by function and
    line offset from the function's definition in SRC, or when SRC is '-' by the names of all
    their frames in the executable with debug information (a C program: symbol names are the
    function names).
    The same allocation counts, sizes, access counts and lifetimes."""
    prof = json.load(open(js))
    for c in prof['contexts']:  # schema 2: frames are indices into frame_table
        c['frames'] = [prof['frame_table'][i] for i in c['frames']]
    exe = prof['process']['executable']
    hib = {'AllocCount': 'alloc_count', 'TotalSize': 'total_size', 'MinSize': 'min_size',
           'MaxSize': 'max_size', 'TotalAccessCount': 'total_access_count',
           'MinAccessCount': 'min_access_count', 'MaxAccessCount': 'max_access_count',
           'TotalLifetime': 'total_lifetime_ms', 'MinLifetime': 'min_lifetime_ms',
           'MaxLifetime': 'max_lifetime_ms'}
    want = {}
    for c in prof['contexts']:
        own = [f for f in c['frames'] if f['module'] == exe and f['file']]
        if not own or not c['alloc_count']:
            continue
        f = own[0]
        key = (' < '.join(f['function'] for f in own), 0)
        if src != '-':
            d = decl_line(src, f['function'])
            if d is None:
                continue
            key = (f['function'], f['line'] - d)
        w = want.setdefault(key, {k: [] for k in MIB_FIELDS})
        for k, j in hib.items():
            w[k].append(c[j])
    got = {}
    for s in alloc_sites(show):
        leaf = s['frames'][0]
        key = (leaf[0], leaf[1]) if src != '-' else (' < '.join(f[0] for f in s['frames']), 0)
        g = got.setdefault(key, {k: [] for k in MIB_FIELDS})
        for k in MIB_FIELDS:
            g[k].append(s['mib'][k])
    bad = []
    if not want:
        bad.append('no context of %s in the JSON' % exe)
    for key in sorted(set(want) | set(got)):
        w, g = want.get(key), got.get(key)
        if w is None or g is None:
            bad.append('%s:%d only in %s' % (key[0], key[1], 'LLVM' if w is None else 'heapprof'))
            continue
        for k in MIB_FIELDS:
            agg = min if k.startswith('Min') else max if k.startswith('Max') else sum
            if agg(w[k]) != agg(g[k]):
                bad.append('%s:%d %s heapprof %d LLVM %d' % (key[0], key[1], k, agg(w[k]),
                                                            agg(g[k])))
    for b in bad[:20]:
        print(b)
    if not bad:
        print('%d sites equal' % len(want))
    return 1 if bad else 0


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == 'sites':
        sys.exit(cmd_sites(sys.argv[2]))
    if len(sys.argv) == 5 and sys.argv[1] == 'json':
        sys.exit(cmd_json(*sys.argv[2:]))
    sys.exit(__doc__)
