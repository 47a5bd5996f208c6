// What a capture's reference node itself fails or warns of under the universal rules (no baseline): a class records
// what the node is, so a link trained down, isolation left on, Relaxed Ordering off, slurmd's memlock at 64 KiB on
// the reference becomes what every node of the class is expected to be, and later nodes with the same fault pass.
// Said, one line per check and code, so the admin sees it before the class goes out; never refused (a site may mean
// it: an IOMMU in translation kept on purpose).
import type { Finding } from '../model/finding.js';

/** Findings about the capturing process itself (its memlock is the admin's shell's, not the node's): not the node's. */
const aboutTheCapture = (f: Finding): boolean => f.check === 'memlock-limit' && f.subject === 'self';

/** `universal`: every check's findings on the reference without a baseline (engine/evaluate.ts judgeUniversal). */
export function referenceFaults(universal: readonly Finding[]): string[] {
  const fs = universal.filter((f) => (f.status === 'fail' || f.status === 'warn') && !aboutTheCapture(f));
  const groups = new Map<string, Finding[]>();
  for (const f of fs) {
    const k = `${f.status} ${f.check} ${f.code}`;
    const l = groups.get(k);
    if (l) l.push(f);
    else groups.set(k, [f]);
  }
  const lines = [...groups.values()].map((l) => {
    const f = l[0]!;
    const more = l.length > 1 ? ` (and ${l.length - 1} more: ${l.slice(1, 4).map((x) => x.subject).join(', ')}${l.length > 4 ? ', …' : ''})` : '';
    return `the reference node itself ${f.status === 'fail' ? 'fails' : 'warns'} ${f.check} ${f.code} on ${f.subject}: ${f.message}${more}`;
  });
  if (lines.length) lines.push(`the class records this node as it is: a node with ${lines.length === 1 ? 'that fault' : 'those faults'} may pass against it; capture from a node that is clean under \`gdrgate check\` (no baseline), or edit the class`);
  return lines;
}
