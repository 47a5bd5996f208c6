// A command given a fixed time (`timeoutMs: <number>`, not one derived from a deadline) has that time to itself: the
// module that runs it is loaded first (`exec.ready?.()`, within the three lines before the call), since ExecaExec
// counts its timeout from the call, loading included, and on a loaded node the loading alone took 5 s (umount in the
// Epilog). Every source file is read; the rule's own valid and invalid cases first.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';

/** `file:line` of each `.run(…timeoutMs: <number>…)` without a `.ready?.()` in the three lines before it. */
function unready(file: string, text: string): string[] {
  const lines = text.split('\n');
  return lines.flatMap((l, i) => (/\.run\(.*timeoutMs: [0-9_]+/.test(l) && !lines.slice(Math.max(0, i - 3), i).some((p) => /\.ready\?\.\(\)/.test(p)) ? [`${file}:${i + 1}`] : []));
}

t.test('the rule', async (t) => {
  t.same(unready('a.ts', 'const r = await exec.run(F, [], { timeoutMs: 5000 });'), ['a.ts:1']);
  t.same(unready('a.ts', 'await exec.ready?.();\nconst r = await exec.run(F, [], { timeoutMs: 5_000 });'), []);
  t.same(unready('a.ts', 'const r = await exec.run(F, [], { timeoutMs: left });'), []);
  t.same(unready('a.ts', 'await exec.ready?.();\n\n\n\nconst r = await exec.run(F, [], { timeoutMs: 5000 });'), ['a.ts:5']);
});

t.test('the tree: every fixed-time command loads its module first', async (t) => {
  const files = (readdirSync(path.join(REPO, 'src'), { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
  t.equal(files.length > 100, true, `${files.length} source files read`);
  t.same(files.sort().flatMap((f) => unready(`src/${f}`, readFileSync(path.join(REPO, 'src', f), 'utf8'))), []);
});
