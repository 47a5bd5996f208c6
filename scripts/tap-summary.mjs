// Prints tap's final counts as the plain line CI reads: "N passed, N failed, N skipped"; given several logs (one
// per tap run), their sum.
import { readFileSync } from 'node:fs';

const files = process.argv.length > 2 ? process.argv.slice(2) : [0];
const sum = { pass: 0, fail: 0, skip: 0 };
for (const f of files) {
  const text = readFileSync(f, 'utf8');
  // tap's closing comment: "# { total: 123, pass: 120, fail: 1, skip: 2 }"
  const last = [...text.matchAll(/^# \{ (total: \d+[^}]*)\}$/gm)].pop();
  if (!last) {
    console.log('0 passed, 1 failed');
    process.exit(0);
  }
  const n = (k) => Number(new RegExp(`\\b${k}: (\\d+)`).exec(last[1])?.[1] ?? 0);
  sum.pass += n('pass');
  sum.fail += n('fail');
  sum.skip += n('skip') + n('todo');
}
console.log(`${sum.pass} passed, ${sum.fail} failed, ${sum.skip} skipped`);
