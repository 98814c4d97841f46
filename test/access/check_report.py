#!/usr/bin/env python3
"""Checks heapprof-report's JSON of patterns.c, built by heapprof-cc in MODE and run under the
shim, against patterns.expected: per site (the function of the context's first frame; the two
allocations of site_copy told apart by their source lines), 4 blocks of the site's size, the
accesses and writes in total and per block (every block of a site does the same), reads, the
utilisation of every block, the histogram (the "hist" lines: bins of k blocks at r = 0 plus
4 - k at r = 32), and the per-word histogram and its saturated words (the "words" lines, callback
builds; none at all in inline builds). Also the profile's "access" object: the mode, reads and
writes apart or not, the two instrumented modules, and the per-word histograms' parameters.
Usage: check_report.py EXPECTED MODE REPORT.json PATTERNS.c
Prints one line per difference; exit status 1 if there is any."""
import json
import re
import sys

BLOCKS = 4
SIZES = {'every8': 256, 'half': 512, 'untouched': 1024, 'readheavy': 128, 'memset': 1000,
         'wide': 256, 'copy_src': 64, 'copy_dst': 64, 'lib': 256, 'fields': 48}
problems = []


def bins(text):
    """'8x15,5' -> [8] * 15 + [5]; '4:0x2' -> [4, 0, 4, 0]; '-' -> None."""
    if text == '-':
        return None
    out = []
    for part in text.split(','):
        n, _, times = part.partition('x')
        out += [int(x) for x in n.split(':')] * (int(times) if times else 1)
    return out


def trim(v):
    v = list(v)
    while v and v[-1] == 0:
        v.pop()
    return v


def mix(h0, h32, k):
    """The bins of k blocks at r = 0 and BLOCKS - k at r = 32."""
    parts = [(h0, k), (h32, BLOCKS - k)]
    n = max(len(h or []) for h, _ in parts)
    out = [0] * n
    for h, times in parts:
        if times and h is None:
            return None
        for i, x in enumerate(h or []):
            out[i] += x * times
    return trim(out)


def expected(path, mode):
    want, hist, words = {}, {}, {}
    for line in open(path):
        f = line.split()
        if not f or f[0].startswith('#'):
            continue
        if f[0] == mode:
            want[f[1]] = (int(f[2]), int(f[3]), f[4])
        elif f[0] == 'hist':
            hist[f[1]] = (bins(f[2]), bins(f[3]))
        elif f[0] == 'words':
            words[f[1]] = (bins(f[2]), bins(f[3]))
    return want, hist, words


def check_words(name, c, want, mode):
    """The per-word histogram of a site: exact in callback builds, absent in inline ones."""
    got = c['access_word_histogram']
    counts, sat = want if mode in ('callbacks', 'gcc') else (None, None)
    if counts is None:
        if got is not None:
            problems.append('%s: access_word_histogram %s, expected none' % (name, got))
        return
    if got is None:
        problems.append('%s: no access_word_histogram, expected %s' % (name, counts))
        return
    if got['word'] != 8:
        problems.append('%s: word histogram word is %s' % (name, got['word']))
    if len(got['saturated_blocks']) != len(got['counts']):
        problems.append('%s: %d counts, %d saturated_blocks' % (name, len(got['counts']),
                                                               len(got['saturated_blocks'])))
    if trim(got['counts']) != trim(counts):
        problems.append('%s: word histogram %s, expected %s' % (name, got['counts'], trim(counts)))
    if trim(got['saturated_blocks']) != trim(sat or []):
        problems.append('%s: saturated words %s, expected %s' % (name, got['saturated_blocks'],
                                                                 trim(sat or [])))


def sites(report, source):
    lines = open(source).read().split('\n')
    copy_line = {}
    for i, text in enumerate(lines, 1):
        if 'struct s64 *s = take_new' in text:
            copy_line[i] = 'copy_src'
        elif 'struct s64 *d = take_new' in text:
            copy_line[i] = 'copy_dst'
    found = {}
    for c in report['contexts']:
        if not c['frames']:
            continue
        m = re.match(r'site_(\w+)$', c['frames'][0]['function'])
        if not m:
            continue
        name = m.group(1)
        if name == 'copy':
            name = copy_line.get(c['frames'][0]['line'], 'copy at line %d' % c['frames'][0]['line'])
        if name in found:
            problems.append('%s: two contexts (%d and %d)' % (name, found[name]['context_id'],
                                                              c['context_id']))
        found[name] = c
    return found


def check_site(name, c, acc, wr, util, h0, h32, mode):
    def eq(what, got, want):
        if got != want:
            problems.append('%s: %s is %s, expected %s' % (name, what, got, want))
    eq('alloc_count', c['alloc_count'], BLOCKS)
    eq('total_size', c['total_size'], BLOCKS * SIZES[name])
    eq('total_access_count', c['total_access_count'], acc)
    eq('min_access_count', c['min_access_count'], acc // BLOCKS)
    eq('max_access_count', c['max_access_count'], acc // BLOCKS)
    eq('total_write_count', c['total_write_count'], wr)
    eq('min_write_count', c['min_write_count'], wr // BLOCKS)
    eq('max_write_count', c['max_write_count'], wr // BLOCKS)
    eq('total_read_count', c['total_read_count'], acc - wr)
    if util == 'full':
        pct = 100
    elif util == 'none':
        pct = 0
    else:
        t, g = (int(x) for x in util.split('/'))
        pct = 100 * t // g
    eq('min_percent_utilized', c['min_percent_utilized'], pct)
    eq('max_percent_utilized', c['max_percent_utilized'], pct)
    eq('total_percent_utilized', c['total_percent_utilized'], BLOCKS * pct)
    density = acc / (BLOCKS * SIZES[name])
    if abs(c['access_density'] - density) > 1e-6 * max(density, 1):
        problems.append('%s: access_density is %s, expected %s' % (name, c['access_density'], density))
    got = c['access_histogram']
    if acc == 0:
        eq('access_histogram', got, None)
        return
    if got is None:
        problems.append('%s: no access_histogram' % name)
        return
    eq('histogram granule', got['granule'], 64)
    counts = trim(got['counts'])
    options = [m for m in (mix(h0, h32, k) for k in range(BLOCKS + 1)) if m is not None]
    if sum(h0 or h32) * BLOCKS != acc:
        problems.append('%s: patterns.expected\'s histogram adds up to %d a block, not %d'
                        % (name, sum(h0 or h32), acc // BLOCKS))
    if counts not in options:
        problems.append('%s: histogram %s, expected one of %s' % (name, counts, options))


def main():
    expected_path, mode, json_path, source = sys.argv[1:5]
    want, hist, words = expected(expected_path, 'inline' if mode == 'clang16' else mode)
    report = json.load(open(json_path))
    for c in report['contexts']:  # schema 2: frames are indices into the frame table
        c['frames'] = [report['frame_table'][i] for i in c['frames']]
    found = sites(report, source)
    a = report['access']
    if a is None:
        problems.append('the profile has no access data ("access" is null)')
    else:
        modes = {'inline': ['inline'], 'clang16': ['inline'], 'callbacks': ['callbacks'],
                 'gcc': ['gcc']}[mode]
        if a['modes'] != modes:
            problems.append('access.modes is %s, expected %s' % (a['modes'], modes))
        if a['reads_writes_apart'] != (mode in ('callbacks', 'gcc')):
            problems.append('access.reads_writes_apart is %s' % a['reads_writes_apart'])
        if a['abi_unknown']:
            problems.append('access.abi_unknown is true')
        names = sorted(m.rsplit('/', 1)[-1] for m in a['instrumented_modules'])
        if names != ['libaccess_lib.so', 'patterns']:
            problems.append('instrumented_modules are %s' % a['instrumented_modules'])
        wh = a.get('word_histograms')
        if mode in ('callbacks', 'gcc'):
            if wh != {'word': 8, 'max_size': 256, 'counter_max': 255, 'complete': True}:
                problems.append('access.word_histograms is %s' % wh)
        elif wh is not None:
            problems.append('access.word_histograms is %s in an inline build' % wh)
    for name, (acc, wr, util) in sorted(want.items()):
        if name not in found:
            problems.append('%s: no context whose first frame is site_%s' % (name, name))
            continue
        h0, h32 = hist.get(name, (None, None))
        check_site(name, found[name], acc, wr, util, h0, h32, mode)
        check_words(name, found[name], words.get(name, (None, None)), mode)
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()
