// The hottest functions of a V8 CPU profile (node --cpu-prof): self time, then inclusive time, in ms. Usage: node bench/profile-top.mjs DIR (the first .cpuprofile in it).
import { readFileSync, readdirSync } from 'node:fs';
const dir = process.argv[2];
const p = JSON.parse(readFileSync(dir + '/' + readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))[0], 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = p.timeDeltas; let total = 0;
p.samples.forEach((id, i) => { const n = byId.get(id); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + (dt[i] ?? 0)); total += dt[i] ?? 0; });
console.log('total ms', total / 1000);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log((v / 1000).toFixed(1), k);
// inclusive by parent chain
const parent = new Map(); for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const incl = new Map();
p.samples.forEach((id, i) => { const seen = new Set(); let cur = id; while (cur !== undefined) { const n = byId.get(cur); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`; if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + (dt[i] ?? 0)); } cur = parent.get(cur); } });
console.log('--- inclusive');
for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, 45)) console.log((v / 1000).toFixed(1), k);
