// Prints tap's final counts as the plain line CI reads: "N passed, N failed, N skipped".
import { readFileSync } from 'node:fs';

const text = readFileSync(process.argv[2] ?? 0, 'utf8');
// tap's closing comment: "# { total: 123, pass: 120, fail: 1, skip: 2 }"
const last = [...text.matchAll(/^# \{ (total: \d+[^}]*)\}$/gm)].pop();
if (!last) {
  console.log('0 passed, 1 failed');
  process.exit(0);
}
const n = (k) => Number(new RegExp(`\\b${k}: (\\d+)`).exec(last[1])?.[1] ?? 0);
console.log(`${n('pass')} passed, ${n('fail')} failed, ${n('skip') + n('todo')} skipped`);
