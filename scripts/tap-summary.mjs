// Prints tap's final counts as the plain line CI reads: "N passed, N failed, N skipped"; given several logs (one
// per tap run), their sum. Before that line it repeats every failed test with its diagnostics, so that a CI that
// keeps only the tail of its output still says which test failed and why.
import { readFileSync } from 'node:fs';

const files = process.argv.length > 2 ? process.argv.slice(2) : [0];
const sum = { pass: 0, fail: 0, skip: 0 };
const failures = [];
let unreadable = false;
for (const f of files) {
  const text = readFileSync(f, 'utf8');
  failures.push(...failedTests(text));
  // tap's closing comment: "# { total: 123, pass: 120, fail: 1, skip: 2 }"
  const last = [...text.matchAll(/^# \{ (total: \d+[^}]*)\}$/gm)].pop();
  if (!last) {
    unreadable = true;
    continue;
  }
  const n = (k) => Number(new RegExp(`\\b${k}: (\\d+)`).exec(last[1])?.[1] ?? 0);
  sum.pass += n('pass');
  sum.fail += n('fail');
  sum.skip += n('skip') + n('todo');
}
if (failures.length > 0) {
  console.log(`\n# ${failures.length} failed test point(s), innermost first within each file:`);
  for (const f of failures.slice(0, 20)) console.log(f);
  if (failures.length > 20) console.log(`# … and ${failures.length - 20} more in the log`);
}
if (unreadable) {
  console.log('0 passed, 1 failed');
  process.exit(0);
}
console.log(`${sum.pass} passed, ${sum.fail} failed, ${sum.skip} skipped`);

/**
 * Every "not ok" line of a TAP stream whose subtests did not fail themselves (the failing assertion, not each
 * parent that failed because of it), with the file it belongs to and up to 40 lines of its YAML diagnostics.
 */
function failedTests(text) {
  const lines = text.split('\n');
  const out = [];
  // The path of enclosing subtest names, by indentation (4 spaces a level in tap's output).
  const names = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^( *)(not ok|ok) \d+ - (.*?)(?: # time=[0-9.]+ms)?$/.exec(lines[i]);
    const sub = /^( *)# Subtest: (.*)$/.exec(lines[i]);
    if (sub) {
      const depth = sub[1].length / 4;
      names.length = depth;
      names[depth] = sub[2];
      continue;
    }
    if (!m || m[2] !== 'not ok') continue;
    const depth = m[1].length / 4;
    // A parent whose children were shown: its failure is theirs, already reported.
    const prev = out.at(-1);
    if (prev && prev.depth > depth && prev.path.slice(0, depth + 1).join('\u0000') === names.slice(0, depth + 1).join('\u0000')) continue;
    const diag = [];
    if (/^ *---$/.test(lines[i + 1] ?? '')) {
      for (let j = i + 2; j < lines.length && !/^ *\.\.\.$/.test(lines[j]) && diag.length < 40; j++) diag.push(lines[j]);
    }
    out.push({ depth, path: [...names.slice(0, depth), m[3]], diag });
  }
  return out.map((f) => [`not ok - ${f.path.join(' > ')}`, ...f.diag].join('\n'));
}
