// The Prolog's gres.conf reading (job-placement, the job's GPU numbering), per parse of a DGX-style file: one line a
// GPU with Type= and Cores=. Usage: node bench/gres-conf.mjs [OTHER_DIST] (after npm run build; OTHER_DIST: another
// build's dist/ to time beside this one, e.g. a worktree of an older commit built with tsc).
import path from 'node:path';

const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const text = ['# DGX H100', 'AutoDetect=off', ...Array.from({ length: 8 }, (_, i) => `NodeName=dgx[001-128] Name=gpu Type=h100 File=/dev/nvidia${i} Cores=${i < 4 ? '0-55' : '56-111'}`)].join('\n') + '\n';
const builds = [['this', path.join(REPO, 'dist')], ...(process.argv[2] ? [['other', path.resolve(process.argv[2])]] : [])];
const parsers = await Promise.all(builds.map(async ([name, dist]) => [name, (await import(path.join(dist, 'parsers/gres-conf.js'))).parseGresConf]));
const time = (f) => {
  for (let i = 0; i < 2000; i++) f(text);
  const t0 = performance.now();
  for (let i = 0; i < 20000; i++) f(text);
  return ((performance.now() - t0) / 20) .toFixed(2);
};
for (let round = 1; round <= 3; round++) console.log(`round ${round}: ${parsers.map(([name, f]) => `${name} ${time(f)} µs`).join('   ')}`);
