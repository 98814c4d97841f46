/* heapprof's HTML report: draws the process summary, the live heap over time, the size
 * histogram, a flame graph and the table of contexts from the JSON data in #hp-data.
 *
 * The data (report/html_data.c writes it):
 *   process, summary    the PROCESS and SUMMARY records' figures (dump_reason, unwinder: numbers)
 *   access              null, or {modes: [...], granule: bytes, rw_apart: 0|1}
 *   cut                 null, or {files, size, records, dropped, summary_rebuilt: 0|1} for a
 *                       profile cut short (size and records 0 in a merged one)
 *   diff, metric        1 for a diff profile (figures are new minus base); the first metric
 *   strs                distinct strings; strs[0] is ""
 *   frames              5 numbers per frame: name, file (strs indices), line, module, inlined
 *   nodes               2 numbers per node i = 1..: i minus its parent, frame; node 0 is the
 *                       root. A path from the root runs from the outermost frame inwards.
 *   cols, ctx           ctx holds cols.length numbers per context (in --sort order); "node"
 *                       is the node of its whole stack
 *   hist                [row, [count per granule...]] for contexts with an access histogram
 *   timeline            per loaded profile: pid, dump_seq, dump_ms, live_size, live_count,
 *                       total_bytes, dump_reason, peak_ms, peak_live_size, start_unix_ms
 *                       (the process's start; *_ms count from it)
 */
'use strict';
(function () {
  const t0 = performance.now();
  const $ = (id) => document.getElementById(id);
  const D = JSON.parse($('hp-data').textContent);
  const W = D.cols.length;
  const N = D.ctx.length / W;
  const C = {};
  D.cols.forEach((name, i) => { C[name] = i; });
  const NN = D.nodes.length / 2 + 1;
  const nodeParent = new Int32Array(NN);
  const nodeFrame = new Int32Array(NN);
  for (let i = 1; i < NN; i++) {
    nodeParent[i] = i - D.nodes[2 * i - 2];
    nodeFrame[i] = D.nodes[2 * i - 1];
  }
  const REASONS = ['?', 'exit', 'heapprof_dump()', 'signal', 'interval', 'killed', 'credentials change', 'new peak'];
  const UNWINDERS = ['?', 'fp', 'libunwind', 'cfi'];
  const METRICS = [
    ['alloc_bytes', 'bytes allocated', 'bytes'], ['alloc_count', 'allocations', 'count'],
    ['peak_bytes', 'bytes at the peak', 'bytes'], ['inuse_bytes', 'leaked (live at dump) bytes', 'bytes'],
    ['inuse_count', 'leaked blocks', 'count'], ['peak_count', 'blocks at the peak', 'count'],
    ['accesses', 'accesses', 'count'], ['lifetime_ms', 'total lifetime', 'ms'],
  ];
  const val = (row, name) => D.ctx[row * W + C[name]];

  /* ---- formatting ---- */
  function esc(s) {
    return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
  }
  function fmtNum(n) {
    return (Math.round(n) || 0).toLocaleString('en-US'); /* no "-0" */
  }
  function fmtBytes(n) {
    const sign = n < 0 ? '-' : '';
    let v = Math.abs(n);
    if (v < 1024) return sign + Math.round(v) + ' B';
    const units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let u = -1;
    while (v >= 1023.95 && u < units.length - 1) { v /= 1024; u++; }
    return sign + v.toFixed(1) + ' ' + units[u];
  }
  function fmtUnit(n, unit) {
    if (unit === 'bytes') return fmtBytes(n);
    if (unit === 'ms') return fmtNum(n) + ' ms';
    return fmtNum(n);
  }
  function signed(n, text) {
    if (!D.diff || n === 0) return text;
    return '<span class="' + (n > 0 ? 'pos' : 'neg') + '">' + (n > 0 ? '+' : '') + text + '</span>';
  }

  /* ---- frames ---- */
  const fName = (f) => D.strs[D.frames[5 * f]];
  const fFile = (f) => D.strs[D.frames[5 * f + 1]];
  const fLine = (f) => D.frames[5 * f + 2];
  const fModule = (f) => D.strs[D.frames[5 * f + 3]];
  const fInlined = (f) => D.frames[5 * f + 4];
  const base = (p) => p.slice(p.lastIndexOf('/') + 1);
  /* A context's allocating function: the innermost frame of its stack. */
  function leafName(row) {
    const n = val(row, 'node');
    return n ? fName(nodeFrame[n]) : '[no stack]';
  }
  function leafModule(row) {
    const n = val(row, 'node');
    return n ? base(fModule(nodeFrame[n])) : '';
  }

  /* ---- summary ---- */
  function summary() {
    const p = D.process, s = D.summary;
    $('cmd').textContent = p.argv.join(' ') + (D.diff ? '   (diff: new minus base)' : '');
    const rows = [];
    const add = (k, v) => rows.push('<tr><td>' + esc(k) + '</td><td>' + v + '</td></tr>');
    add('command', '<span class="mono">' + esc(p.argv.join(' ')) + '</span>');
    add('executable', '<span class="mono">' + esc(p.exe) + '</span>');
    add('pid', p.pid + ' (parent ' + p.ppid + (p.forked_from ? ', forked from ' + p.forked_from : '') + ')');
    add('profile', esc(D.file) + ': written at ' + fmtNum(p.dump_ms) + ' ms, ' +
      esc(REASONS[p.dump_reason] || '?') + (p.dump_seq ? ', dump ' + p.dump_seq : ''));
    add('backend', esc(p.backend) + (p.allocator ? ' <span class="muted">(' + esc(p.allocator) + ')</span>' : ''));
    add('unwinder', esc(UNWINDERS[p.unwinder] || '?') + ', up to ' + p.stack_depth + ' frames');
    if (D.cut) {
      const c = D.cut;
      add('cut short', '<span id="cut-short">' + (c.size ? 'at byte ' + fmtNum(c.size) + ' (no END record): ' +
        fmtNum(c.records) + ' complete records read' : fmtNum(c.files) + ' of the profiles merged have no END record') +
        '; ' + fmtNum(c.dropped) + ' contexts left out' +
        (c.summary_rebuilt ? '; totals are the contexts\' sums, peak unknown' : '') + '</span>');
    }
    add('allocations', fmtNum(s.total_allocs) + ' (' + fmtBytes(s.total_bytes) + '), ' + fmtNum(s.total_frees) + ' frees');
    add('peak heap', fmtBytes(s.peak_live_size) + ' in ' + fmtNum(s.peak_live_count) + ' blocks at ' + fmtNum(s.peak_ms) + ' ms');
    add('live at dump', fmtBytes(s.live_size) + ' in ' + fmtNum(s.live_count) + ' blocks' +
      (p.dump_reason === 1 ? ' (leaked)' : ''));
    add('contexts', fmtNum(N) + (s.evicted_hibs ? ', ' + fmtNum(s.evicted_hibs) + ' evicted records' : '') +
      (s.truncated_stacks ? ', ' + fmtNum(s.truncated_stacks) + ' truncated stacks' : ''));
    add('access profiling', D.access ? esc(D.access.modes.join(', ') || 'attached') + ', ' + D.access.granule +
      '-byte granules' + (D.access.rw_apart ? ', reads and writes apart' : '') : '<span class="muted">none</span>');
    if (N > 0) {
      const top = rowsSortedBy('alloc_bytes')[0];
      add('top context', '<span class="mono" id="top-fn">' + esc(leafName(top)) + '</span> ' +
        signed(val(top, 'alloc_bytes'), fmtBytes(val(top, 'alloc_bytes'))));
    }
    $('summary').innerHTML = rows.join('');
  }

  function rowsSortedBy(name, asc) {
    const rows = new Int32Array(N);
    for (let i = 0; i < N; i++) rows[i] = i;
    const k = C[name];
    return Array.from(rows).sort((a, b) => {
      const d = D.ctx[b * W + k] - D.ctx[a * W + k];
      return (asc ? -d : d) || a - b;
    });
  }

  /* ---- live heap over time (one SVG line per process) ---- */
  function timeline() {
    /* times from the start of the first process, so several processes share the axis */
    const t0ms = Math.min(...D.timeline.map((t) => t[9]));
    const pts = D.timeline.map((t) => ({ pid: t[0], seq: t[1], ms: t[9] - t0ms + t[2], live: t[3], count: t[4], reason: t[6],
      peakMs: t[9] - t0ms + t[7], peak: t[8] }));
    const el = $('timeline');
    if (pts.length < 2) {
      const t = pts[0];
      el.innerHTML = '<p class="muted">One dump: ' + fmtBytes(t.live) + ' live at ' + fmtNum(t.ms) +
        ' ms, peak ' + fmtBytes(t.peak) + ' at ' + fmtNum(t.peakMs) + ' ms. Numbered or interval dumps ' +
        '(heapprof_dump(), dump_interval_ms=) given together draw the heap over time here.</p>';
      return;
    }
    const w = 560, h = 200, l = 64, r = 10, tp = 10, b = 28;
    const maxMs = Math.max(1, ...pts.map((p) => Math.max(p.ms, p.peakMs)));
    const maxY = Math.max(1, ...pts.map((p) => Math.max(p.live, p.peak)));
    const COLOURS = ['#4c78a8', '#f58518', '#54a24b', '#e45756', '#72b7b2', '#b279a2'];
    const X = (ms) => l + (w - l - r) * ms / maxMs;
    const Y = (v) => h - b - (h - b - tp) * v / maxY;
    const byPid = new Map();
    pts.forEach((p) => { if (!byPid.has(p.pid)) byPid.set(p.pid, []); byPid.get(p.pid).push(p); });
    let svg = '<svg viewBox="0 0 ' + w + ' ' + h + '" role="img" aria-label="live heap over time">';
    svg += '<line class="axis" x1="' + l + '" y1="' + (h - b) + '" x2="' + (w - r) + '" y2="' + (h - b) + '"/>';
    svg += '<line class="axis" x1="' + l + '" y1="' + tp + '" x2="' + l + '" y2="' + (h - b) + '"/>';
    svg += '<text x="' + (l - 4) + '" y="' + (tp + 8) + '" text-anchor="end">' + fmtBytes(maxY) + '</text>';
    svg += '<text x="' + (l - 4) + '" y="' + (h - b) + '" text-anchor="end">0</text>';
    svg += '<text x="' + (w - r) + '" y="' + (h - 8) + '" text-anchor="end">' + fmtNum(maxMs) + ' ms</text>';
    svg += '<text x="' + l + '" y="' + (h - 8) + '">0 ms</text>';
    let legend = '', k = 0;
    for (const [pid, list] of byPid) {
      const colour = COLOURS[k++ % COLOURS.length];
      list.sort((a, b2) => a.ms - b2.ms);
      svg += '<polyline class="line" style="stroke:' + colour + '" points="' +
        list.map((p) => X(p.ms).toFixed(1) + ',' + Y(p.live).toFixed(1)).join(' ') + '"/>';
      for (const p of list) {
        svg += '<circle r="3" style="fill:' + colour + '" cx="' + X(p.ms).toFixed(1) + '" cy="' + Y(p.live).toFixed(1) + '"><title>pid ' + pid +
          ' dump ' + p.seq + ' (' + esc(REASONS[p.reason] || '?') + ') at ' + fmtNum(p.ms) + ' ms: ' + fmtBytes(p.live) +
          ' live in ' + fmtNum(p.count) + ' blocks</title></circle>';
      }
      /* the highest peak any dump of the process recorded, which may fall between dumps */
      const top = list.reduce((a, b2) => (b2.peak > a.peak ? b2 : a));
      svg += '<circle r="4" style="fill:none;stroke:' + colour + ';stroke-width:1.5" cx="' + X(top.peakMs).toFixed(1) + '" cy="' +
        Y(top.peak).toFixed(1) + '"><title>pid ' + pid + ' peak: ' + fmtBytes(top.peak) + ' at ' + fmtNum(top.peakMs) + ' ms</title></circle>';
      legend += ' <span style="color:' + colour + '">&#9632; pid ' + pid + '</span>';
    }
    el.innerHTML = svg + '</svg><p class="muted">' + pts.length + ' dumps of ' + byPid.size + ' process' +
      (byPid.size > 1 ? 'es' : '') + ': live bytes at each dump (dots), the peak (ring).' + legend + '</p>';
  }

  /* ---- size histogram: contexts by average block size, in powers of two ---- */
  function sizes() {
    const count = new Map(), bytes = new Map();
    for (let i = 0; i < N; i++) {
      const n = Math.abs(val(i, 'alloc_count')), by = Math.abs(val(i, 'alloc_bytes'));
      if (!n) continue;
      const k = Math.max(0, Math.ceil(Math.log2(Math.max(1, by / n))));
      count.set(k, (count.get(k) || 0) + n);
      bytes.set(k, (bytes.get(k) || 0) + by);
    }
    const keys = Array.from(count.keys()).sort((a, b) => a - b);
    if (!keys.length) { $('sizes').innerHTML = '<p class="muted">no allocations</p>'; return; }
    const maxC = Math.max(...count.values()), maxB = Math.max(...bytes.values());
    let html = '<table><tr class="muted"><td>average size</td><td class="num">allocations</td><td></td><td class="num">bytes</td><td></td></tr>';
    for (const k of keys) {
      html += '<tr><td class="num">&le; ' + fmtBytes(2 ** k) + '</td><td class="num">' + fmtNum(count.get(k)) +
        '</td><td><span class="hbar" style="width:' + Math.max(1, 160 * count.get(k) / maxC).toFixed(0) + 'px"></span></td>' +
        '<td class="num">' + fmtBytes(bytes.get(k)) + '</td><td><span class="hbar b" style="width:' +
        Math.max(1, 160 * bytes.get(k) / maxB).toFixed(0) + 'px"></span></td></tr>';
    }
    $('sizes').innerHTML = html + '</table>' + (D.diff ? '<p class="muted">diff: sizes of the changes</p>' : '');
  }

  /* ---- access histogram strips ---- */
  const hist = new Map(D.hist.map((h) => [h[0], h[1]]));
  function drawStrip(canvas, bins, width, height) {
    const n = bins.length;
    canvas.width = Math.min(n, width);
    canvas.height = 1;
    canvas.style.width = width + 'px';
    canvas.style.height = height + 'px';
    const ctx = canvas.getContext('2d');
    const max = Math.max(1, ...bins);
    const img = ctx.createImageData(canvas.width, 1);
    for (let x = 0; x < canvas.width; x++) {
      /* several granules per pixel when there are more bins than pixels: their maximum */
      let v = 0;
      const a = Math.floor(x * n / canvas.width), z = Math.max(a + 1, Math.floor((x + 1) * n / canvas.width));
      for (let i = a; i < z; i++) v = Math.max(v, bins[i]);
      const t = v ? 0.15 + 0.85 * Math.log1p(v) / Math.log1p(max) : 0;
      img.data[4 * x] = Math.round(255 - 200 * t);
      img.data[4 * x + 1] = Math.round(255 - 120 * t);
      img.data[4 * x + 2] = 255 - Math.round(40 * t);
      img.data[4 * x + 3] = 255;
    }
    ctx.putImageData(img, 0, 0);
  }

  /* ---- flame graph ---- */
  const flame = { parent: [0], name: [-1], ofNode: new Int32Array(NN), zoom: 0, rects: [], metric: D.metric };
  (function buildFlame() {
    /* Trie nodes merge by function name, as flame graphs draw them: one flame node per name
     * path. Parents come before children in both numberings. */
    const key = new Map();
    const S = D.strs.length + 1;
    for (let i = 1; i < NN; i++) {
      const p = flame.ofNode[nodeParent[i]], nm = D.frames[5 * nodeFrame[i]];
      const k = p * S + nm;
      let id = key.get(k);
      if (id === undefined) {
        id = flame.parent.length;
        flame.parent.push(p);
        flame.name.push(nm);
        key.set(k, id);
      }
      flame.ofNode[i] = id;
    }
    const n = flame.parent.length;
    const nkids = new Int32Array(n + 1);
    for (let i = 1; i < n; i++) nkids[flame.parent[i] + 1]++;
    for (let i = 0; i < n; i++) nkids[i + 1] += nkids[i];
    flame.kidStart = nkids;
    flame.kids = new Int32Array(Math.max(1, n - 1));
    const fill = nkids.slice();
    for (let i = 1; i < n; i++) flame.kids[fill[flame.parent[i]]++] = i;
  })();

  function flameValues(metric) {
    const n = flame.parent.length;
    const width = new Float64Array(n), signedV = new Float64Array(n);
    const k = C[metric];
    for (let r = 0; r < N; r++) {
      const v = D.ctx[r * W + k];
      const f = flame.ofNode[D.ctx[r * W + C.node]];
      width[f] += Math.abs(v);
      signedV[f] += v;
    }
    for (let i = n - 1; i > 0; i--) {
      width[flame.parent[i]] += width[i];
      signedV[flame.parent[i]] += signedV[i];
    }
    flame.width = width;
    flame.signed = signedV;
    /* widest first, like a left-heavy flame graph */
    for (let i = 0; i < n; i++) {
      const a = flame.kidStart[i], z = flame.kidStart[i + 1];
      if (z - a > 1) {
        const sub = Array.from(flame.kids.subarray(a, z)).sort((x, y) => width[y] - width[x] || x - y);
        flame.kids.set(sub, a);
      }
    }
  }

  const ROW = 17;
  let matchName = null; /* names (strs index) that match the filter, for highlighting */
  function flameColour(id) {
    if (id === 0) return '#c9c9c9';
    if (matchName && matchName[flame.name[id]]) return '#c266d4';
    if (D.diff) {
      const s = flame.signed[id], w = flame.width[id] || 1;
      const t = Math.min(1, Math.abs(s) / w);
      const c = Math.round(230 - 160 * t);
      return s >= 0 ? 'rgb(240,' + c + ',' + c + ')' : 'rgb(' + c + ',' + c + ',240)';
    }
    const s = D.strs[flame.name[id]];
    let h = 0;
    for (let i = 0; i < s.length && i < 24; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0;
    return 'hsl(' + (h % 50 + 5) + ',' + (75 + h % 20) + '%,' + (58 + (h >> 8) % 12) + '%)';
  }
  function flameLabel(id) {
    return id === 0 ? 'all' : D.strs[flame.name[id]];
  }

  function drawFlame() {
    const canvas = $('flame');
    const cssW = canvas.parentElement.clientWidth || 1200;
    const z = flame.zoom;
    const rects = [];
    /* ancestors of the zoomed node stay visible, full width, above it */
    const chain = [];
    for (let a = z; a !== 0; a = flame.parent[a]) chain.push(a);
    chain.push(0);
    chain.reverse();
    chain.forEach((id, d) => rects.push([0, d, cssW, id]));
    const scale = flame.width[z] ? cssW / flame.width[z] : 0;
    const stack = [[z, 0, chain.length - 1]];
    let maxDepth = chain.length;
    while (stack.length) {
      const [id, x, d] = stack.pop();
      let cx = x;
      for (let i = flame.kidStart[id]; i < flame.kidStart[id + 1]; i++) {
        const k = flame.kids[i], w = flame.width[k] * scale;
        if (w < 0.4) break; /* sorted widest first: the rest are narrower still */
        rects.push([cx, d + 1, w, k]);
        if (d + 2 > maxDepth) maxDepth = d + 2;
        stack.push([k, cx, d + 1]);
        cx += w;
      }
    }
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(cssW * dpr);
    canvas.height = Math.round(maxDepth * ROW * dpr);
    canvas.style.height = maxDepth * ROW + 'px';
    const ctx = canvas.getContext('2d');
    ctx.scale(dpr, dpr);
    ctx.font = '11px ui-monospace, monospace';
    ctx.textBaseline = 'middle';
    for (const [x, d, w, id] of rects) {
      ctx.fillStyle = flameColour(id);
      ctx.fillRect(x, d * ROW, Math.max(0.5, w - 0.5), ROW - 1);
      if (w > 30) {
        const label = flameLabel(id);
        const fit = Math.floor((w - 6) / 6.7);
        ctx.fillStyle = '#111';
        ctx.fillText(label.length > fit ? label.slice(0, Math.max(0, fit - 1)) + '\u2026' : label, x + 3, d * ROW + ROW / 2);
      }
    }
    flame.rects = rects;
    document.body.dataset.flameFrames = rects.length; /* for tests: how many frames were drawn */
    const m = METRICS.find((q) => q[0] === flame.metric);
    $('flame-info').textContent = (z ? 'zoomed into ' + flameLabel(z) + ': ' : 'total: ') +
      fmtUnit(flame.width[z], m[2]) + (D.diff ? ' changed (net ' + fmtUnit(flame.signed[z], m[2]) + ')' : '');
  }

  function flameHit(ev) {
    const canvas = $('flame');
    const r = canvas.getBoundingClientRect();
    const x = ev.clientX - r.left, d = Math.floor((ev.clientY - r.top) / ROW);
    for (const q of flame.rects)
      if (q[1] === d && x >= q[0] && x < q[0] + q[2]) return q[3];
    return -1;
  }

  function flameSetup() {
    const sel = $('metric');
    sel.innerHTML = METRICS.map((m) => '<option value="' + m[0] + '">' + esc(m[1]) + '</option>').join('');
    if (!METRICS.some((m) => m[0] === flame.metric)) flame.metric = 'alloc_bytes';
    sel.value = flame.metric;
    sel.addEventListener('change', () => { flame.metric = sel.value; flameValues(flame.metric); drawFlame(); });
    $('flame-reset').addEventListener('click', () => { flame.zoom = 0; drawFlame(); });
    const canvas = $('flame'), tip = $('flame-tip');
    canvas.addEventListener('click', (ev) => {
      const id = flameHit(ev);
      if (id >= 0) { flame.zoom = id; drawFlame(); }
    });
    canvas.addEventListener('mousemove', (ev) => {
      const id = flameHit(ev);
      if (id < 0) { tip.hidden = true; return; }
      const m = METRICS.find((q) => q[0] === flame.metric);
      const all = flame.width[0] || 1;
      tip.textContent = flameLabel(id) + '\n' + fmtUnit(flame.width[id], m[2]) + ' ' + m[1] +
        (D.diff ? ' changed, net ' + fmtUnit(flame.signed[id], m[2]) : '') + ' (' + (100 * flame.width[id] / all).toFixed(1) + '%)';
      tip.hidden = false;
      const wrap = canvas.parentElement.getBoundingClientRect();
      tip.style.left = Math.min(ev.clientX - wrap.left + 12, wrap.width - 320) + 'px';
      tip.style.top = (ev.clientY - wrap.top + canvas.parentElement.scrollTop + 14) + 'px';
    });
    canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
    window.addEventListener('resize', drawFlame);
    flameValues(flame.metric);
    drawFlame();
  }

  /* ---- table of contexts: sorted, filtered, one page of rows in the DOM at a time ---- */
  const PAGE = 50;
  /* title, key, unit, and whether a diff shows the column as a change (the others are the
   * new profile's own figures, or ratios of changes, which mean nothing: shown as a dash) */
  const COLS = [
    ['#', null, 'num'], ['function', 'fn', 'text'], ['bytes', 'alloc_bytes', 'bytes', 1], ['allocs', 'alloc_count', 'count', 1],
    ['avg size', 'avg', 'bytes'], ['min', 'min_size', 'bytes'], ['max', 'max_size', 'bytes'],
    ['leaked', 'inuse_bytes', 'bytes', 1], ['at peak', 'peak_bytes', 'bytes', 1], ['accesses', 'accesses', 'count', 1],
    ['avg lifetime', 'lifetime', 'ms'],
  ];
  if (D.access && D.hist.length) COLS.push(['access histogram', 'hist', 'text']);
  const table = { sortKey: 'alloc_bytes', asc: false, rows: [], page: 0, filter: '', sel: -1 };
  function cellValue(row, key) {
    if (key === 'avg') { const n = val(row, 'alloc_count'); return n && !D.diff ? val(row, 'alloc_bytes') / n : 0; }
    if (key === 'lifetime') { const n = val(row, 'alloc_count'); return n && !D.diff ? val(row, 'lifetime_ms') / n : 0; }
    if (key === 'fn') return leafName(row);
    if (key === 'hist') return hist.has(row) ? hist.get(row).length : 0;
    return val(row, key);
  }
  function tableSort() {
    const key = table.sortKey, dir = table.asc ? 1 : -1;
    if (key === 'fn') {
      const names = new Map();
      table.rows.forEach((r) => names.set(r, leafName(r)));
      table.rows.sort((a, b) => dir * names.get(a).localeCompare(names.get(b)) || a - b);
    } else {
      table.rows.sort((a, b) => dir * (cellValue(a, key) - cellValue(b, key)) || a - b);
    }
  }
  function tableFilter() {
    const q = table.filter.toLowerCase();
    table.rows = [];
    if (!q) {
      matchName = null;
      for (let i = 0; i < N; i++) table.rows.push(i);
    } else {
      /* Names that match, then nodes whose path holds one (parents come first). */
      matchName = new Uint8Array(D.strs.length);
      D.strs.forEach((s, i) => { if (s.toLowerCase().includes(q)) matchName[i] = 1; });
      const nodeMatch = new Uint8Array(NN);
      for (let i = 1; i < NN; i++) nodeMatch[i] = nodeMatch[nodeParent[i]] || matchName[D.frames[5 * nodeFrame[i]]];
      for (let i = 0; i < N; i++) if (nodeMatch[val(i, 'node')]) table.rows.push(i);
    }
    tableSort();
    table.page = 0;
  }
  function tableHead() {
    $('ctx').tHead.innerHTML = '<tr>' + COLS.map((c) => '<th data-key="' + (c[1] || '') + '" class="' +
      (c[2] === 'text' ? 'text ' : '') + (c[1] === table.sortKey ? 'sorted' + (table.asc ? ' asc' : '') : '') + '">' +
      esc(c[0]) + '</th>').join('') + '</tr>';
  }
  function tableRender() {
    const pages = Math.max(1, Math.ceil(table.rows.length / PAGE));
    table.page = Math.min(table.page, pages - 1);
    const from = table.page * PAGE, rows = table.rows.slice(from, from + PAGE);
    let html = '';
    rows.forEach((r, i) => {
      html += '<tr data-row="' + r + '"' + (r === table.sel ? ' class="sel"' : '') + '>';
      for (const c of COLS) {
        if (c[1] === null) html += '<td class="num">' + (from + i + 1) + '</td>';
        else if (c[1] === 'fn') {
          html += '<td class="fn" title="' + esc(leafName(r)) + '">' + (val(r, 'pool') ? '<span class="tag">pool</span> ' : '') +
            esc(leafName(r)) + ' <span class="muted">' + esc(leafModule(r)) + '</span></td>';
        }
        else if (c[1] === 'hist') html += '<td>' + (hist.has(r) ? '<canvas class="strip" data-hist="' + r + '"></canvas>' : '') + '</td>';
        else if (D.diff && (c[1] === 'avg' || c[1] === 'lifetime')) html += '<td class="num muted">&ndash;</td>';
        else {
          const v = cellValue(r, c[1]), text = fmtUnit(v, c[2]);
          html += '<td class="num">' + (c[3] ? signed(v, text) : text) + '</td>';
        }
      }
      html += '</tr>';
    });
    $('ctx').tBodies[0].innerHTML = html;
    for (const cv of $('ctx').querySelectorAll('canvas[data-hist]')) drawStrip(cv, hist.get(+cv.dataset.hist), 140, 12);
    $('ctx-count').textContent = fmtNum(table.rows.length) + (table.rows.length === N ? '' : ' of ' + fmtNum(N)) + ' contexts';
    $('page').textContent = 'page ' + (table.page + 1) + ' of ' + pages;
    $('prev').disabled = table.page === 0;
    $('next').disabled = table.page >= pages - 1;
  }
  function detail(row) {
    table.sel = row;
    const lines = [];
    for (let n = val(row, 'node'), i = 0; n; n = nodeParent[n], i++) {
      const f = nodeFrame[n], file = fFile(f);
      lines.push('#' + i + '  ' + fName(f) + (fInlined(f) ? ' (inlined)' : '') + (file ? ' (' + file + (fLine(f) ? ':' + fLine(f) : '') + ')' : '') +
        (fModule(f) ? ' [' + fModule(f) + ']' : ''));
    }
    const n = val(row, 'alloc_count');
    let html = '<h2>context ' + val(row, 'id') + ': ' + esc(leafName(row)) + '</h2><p>' +
      (val(row, 'pool') ? 'objects of the program\'s own pool (heapprof_pool_alloc): ' : '') +
      signed(n, fmtNum(n)) + ' allocations, ' + signed(val(row, 'alloc_bytes'), fmtBytes(val(row, 'alloc_bytes'))) +
      '; sizes ' + fmtBytes(val(row, 'min_size')) + ' to ' + fmtBytes(val(row, 'max_size')) +
      '; leaked ' + fmtBytes(val(row, 'inuse_bytes')) + ' in ' + fmtNum(val(row, 'inuse_count')) + ' blocks' +
      '; at the peak ' + fmtBytes(val(row, 'peak_bytes')) + '; accesses ' + fmtNum(val(row, 'accesses')) +
      (D.access && D.access.rw_apart ? ' (' + fmtNum(val(row, 'writes')) + ' writes)' : '') + '</p>';
    if (hist.has(row)) {
      const bins = hist.get(row);
      html += '<p>accesses per ' + (D.access ? D.access.granule : 64) + '-byte granule of its blocks (' + bins.length +
        ' granules, darker: more):</p><canvas class="strip" id="detail-strip"></canvas>';
    }
    html += '<div class="stack">' + esc(lines.join('\n') || '[no stack]') + '</div>';
    $('detail').innerHTML = html;
    if (hist.has(row)) drawStrip($('detail-strip'), hist.get(row), Math.min(900, Math.max(200, hist.get(row).length * 4)), 18);
    tableRender();
  }
  function tableSetup() {
    tableHead();
    $('ctx').tHead.addEventListener('click', (ev) => {
      const th = ev.target.closest('th');
      if (!th || !th.dataset.key) return;
      if (table.sortKey === th.dataset.key) table.asc = !table.asc;
      else { table.sortKey = th.dataset.key; table.asc = th.dataset.key === 'fn'; }
      tableHead();
      tableSort();
      table.page = 0;
      tableRender();
    });
    $('ctx').tBodies[0].addEventListener('click', (ev) => {
      const tr = ev.target.closest('tr');
      if (tr) detail(+tr.dataset.row);
    });
    $('prev').addEventListener('click', () => { table.page--; tableRender(); });
    $('next').addEventListener('click', () => { table.page++; tableRender(); });
    let timer = 0;
    $('filter').addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        table.filter = $('filter').value.trim();
        tableFilter();
        tableRender();
        drawFlame();
      }, 150);
    });
    tableFilter();
    tableRender();
    /* report.html#ctx=ID opens that context's details: a link a person can pass on */
    const m = /^#ctx=(\d+)$/.exec(location.hash);
    for (let r = 0; m && r < N; r++) if (val(r, 'id') === +m[1]) { detail(r); break; }
  }

  /* report.html#selftest: drives every control once (sort by each column both ways, filter,
   * pages, details, each metric, zoom, hover) and says so in body data-selftest, so a
   * headless browser test reaches the handlers too; any exception shows on the console. */
  function selfTest() {
    let steps = 0;
    const th = () => $('ctx').tHead.querySelectorAll('th[data-key]');
    for (let i = 0; i < th().length; i++) {
      if (!th()[i].dataset.key) continue;
      th()[i].click();
      th()[i].click();
      steps += 2;
    }
    if (N) {
      table.filter = leafName(table.rows[0]).slice(0, 4);
      tableFilter();
      tableRender();
      drawFlame();
      table.filter = '';
      tableFilter();
      $('next').click();
      $('prev').click();
      $('ctx').tBodies[0].rows[0].click();
      steps += 4;
    }
    const sel = $('metric'), canvas = $('flame'), first = sel.value;
    for (const m of METRICS) {
      sel.value = m[0];
      sel.dispatchEvent(new Event('change'));
      const r = canvas.getBoundingClientRect();
      const at = { clientX: r.left + 4, clientY: r.top + ROW * 1.5, bubbles: true };
      canvas.dispatchEvent(new MouseEvent('mousemove', at));
      canvas.dispatchEvent(new MouseEvent('click', at));
      $('flame-reset').click();
      steps += 4;
    }
    sel.value = first;
    sel.dispatchEvent(new Event('change'));
    document.body.dataset.selftest = 'passed ' + steps;
  }

  window.addEventListener('error', (ev) => {
    const e = $('error');
    e.hidden = false;
    e.textContent = 'report error: ' + ev.message;
  });
  summary();
  timeline();
  sizes();
  flameSetup();
  tableSetup();
  /* for tests and bench/: the page is drawn, and how long the script took */
  document.body.dataset.ready = '1';
  document.body.dataset.renderMs = (performance.now() - t0).toFixed(0);
  if (location.hash === '#selftest') selfTest();
})();
