# requires: node
# Node.js: objects, arrays, JSON (V8 allocates much of its heap itself; malloc still sees a lot).
node -e '
const a = [];
for (let i = 0; i < 100000; i++) a.push({ id: i, s: "v" + (i * 7919 % 10007), l: [i, i * 2] });
const m = new Map();
for (const o of a) m.set(o.s, (m.get(o.s) || 0) + 1);
const s = JSON.stringify(a.filter((o) => o.id % 97 === 0));
console.log(m.size, s.length, JSON.parse(s).length);
console.log([...m.entries()].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).slice(0, 5).join(";"));
const buf = Buffer.alloc(1 << 20, 7); console.log(buf.reduce((x, y) => x + y, 0));
'
