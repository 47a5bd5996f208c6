#!/usr/bin/env node
// Compares gdrgate's NCCL topology file with NCCL's own dump, element by element (after `npm run build`):
//   node scripts/nccl-xml-diff.mjs GDRGATE.xml NCCL_DUMP.xml
// Prints each difference, marked "expected" (the dump holds what the PCI tree does not say, with why) or "DIFF".
// Exit 0: no DIFF line; 1: at least one; 2: a file missing or unreadable as XML.
import { readFileSync } from 'node:fs';
import { diffNcclXml, expectedBecause, gpuBusIds, parseNcclXml, pciLessNets, renderDiff } from '../dist/topo/nccl-diff.js';

const [a, b] = process.argv.slice(2);
if (!a || !b) {
  process.stderr.write('usage: nccl-xml-diff.mjs GDRGATE.xml NCCL_DUMP.xml\n');
  process.exit(2);
}
const read = (f) => {
  let text;
  try {
    text = readFileSync(f, 'utf8');
  } catch (e) {
    process.stderr.write(`${f}: ${e.message}\n`);
    process.exit(2);
  }
  const p = parseNcclXml(text);
  if (!p.ok) {
    process.stderr.write(`${f}: ${p.error}\n`);
    process.exit(2);
  }
  return p.value;
};
const [ours, dump] = [read(a), read(b)];
const gpus = gpuBusIds(dump);
const pciLess = pciLessNets(dump);
let real = 0;
const diffs = diffNcclXml(ours, dump);
for (const d of diffs) {
  const why = expectedBecause(d, gpus, pciLess);
  if (why === null) real++;
  process.stdout.write(`${why === null ? 'DIFF    ' : 'expected'} ${renderDiff([d], { a: 'gdrgate', b: 'nccl' })}${why ? ` (${why})` : ''}\n`);
}
process.stdout.write(`${diffs.length} difference(s), ${real} not explained by the PCI tree\n`);
process.exit(real ? 1 : 0);
