// The differential fuzzer's long run (not a test): seeds FROM..TO (argv), one JSON line per seed that disagrees
// (or per seed with ALL=1), on stdout, with the class its shape tells (C2, C7) or null. Run:
//   node --experimental-transform-types --disable-warning=ExperimentalWarning --import=./test/helpers/ts-resolve.mjs \
//     test/gen/acs-fuzz-loop.ts 0 2000 > /tmp/fuzz.jsonl
// Replay one seed with REPLAY=1 (prints the oracle's output and gdrgate's findings).
import { variant } from './acs-fuzz-gen.js';
import { C2, C7, closeOracle, differences, dmaVerdicts, isC2, judge, noOracle, oneFunctionEach, sides } from '../checks/_acs-oracle.js';

if (noOracle) throw new Error(noOracle);
const [from = 0, to = 100] = process.argv.slice(2).map(Number);
let bad = 0;
for (let seed = from; seed < to; seed++) {
  const v = variant(seed);
  let line: Record<string, unknown>;
  try {
    const r = await judge(v.node);
    const s = sides(r.oracle!, r.findings);
    const diffs = differences(s);
    const groupDiff = r.oracle!.error ? [] : (JSON.stringify(dmaVerdicts(r.iommu)) === JSON.stringify(r.oracle!.groups) ? [] : [`gdrgate=${dmaVerdicts(r.iommu).join(',')} rdma_topo=${r.oracle!.groups.join(',')}`]);
    const platform = r.findings.find((f) => f.code.startsWith('acs-platform') || f.code === 'acs-na');
    // The class its shape tells (acs-fuzz-oracle.test.ts's header), where they differ.
    const c7 = groupDiff.length > 0 && JSON.stringify(oneFunctionEach(dmaVerdicts(r.iommu), r.oracle!.groups)) === JSON.stringify(r.oracle!.groups);
    const cls = diffs.length + groupDiff.length === 0 ? null : isC2(r.oracle!, r) ? C2.slice(0, 2) : c7 && diffs.length === 0 ? C7.slice(0, 2) : null;
    line = { seed, base: v.base, mutations: v.mutations, what: s.what, oracleError: r.oracle!.error, platform: platform ? `${platform.code}: ${platform.message}` : null, diffs, groupDiff, class: cls };
    if (process.env.REPLAY) {
      console.error(r.oracle!.stdout);
      for (const f of r.findings) console.error(`${f.code} ${f.status} ${f.subject} ${f.expected ?? ''} | ${f.message}`);
      for (const f of r.iommu) console.error(`  iommu: ${f.code} ${f.status} ${f.subject} ${f.expected ?? ''} | ${f.message}`);
    }
  } catch (e) {
    line = { seed, base: v.base, mutations: v.mutations, crash: String(e instanceof Error ? e.stack : e).split('\n').slice(0, 3).join(' | ') };
  }
  const disagree = 'crash' in line || (line.diffs as string[]).length > 0 || (line.groupDiff as string[]).length > 0;
  if (disagree) bad++;
  if (disagree || process.env.ALL) console.log(JSON.stringify(line));
}
closeOracle();
console.error(`seeds ${from}..${to - 1}: ${bad} disagreeing`);
