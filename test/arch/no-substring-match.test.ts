// No test compares a string with tap's substring match, an array as a prefix, or a `key: null` that a missing key also
// passes: every test file is parsed and t.match-like calls whose pattern is, or holds, a string, an array literal or
// an object's null value are listed (ESLint-style valid/invalid cases hold the rule itself).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { substringMatches } from './_substring-match.js';

t.test('the rule: invalid', async (t) => {
  const invalid: [string, string][] = [
    [`t.match(r.stdout, 'healthy');`, "a string 'healthy'"],
    ['t.match(r.stdout, `exit ${code}`);', 'a string `exit ${code}`'],
    ["t.match(run, { result: 'healthy' });", "result: a string 'healthy'"],
    ["tt.match(job, { JobState: /^COMPLETED$/, Restarts: '1' }, 'requeued once');", "Restarts: a string '1'"],
    ["const want = 'healthy';\nt.match(x, want);", "want, a string 'healthy'"],
    ["const want = { result: 'healthy' } as const;\nt.match(x, want);", "want, result: a string 'healthy'"],
    ["t.matchStrict(x, { code: 'E' });", "code: a string 'E'"],
    ["t.matchOnly(x, { code: 'E' });", "code: a string 'E'"],
    ["await t.rejects(p, { name: 'UsageError' });", "name: a string 'UsageError'"],
    ["t.throws(() => f(), { message: 'bad' }, 'throws');", "message: a string 'bad'"],
    ["await t.resolveMatch(p, 'ok');", "a string 'ok'"],
  ];
  for (const [src, why] of invalid) t.same(substringMatches('x.test.ts', src).map((f) => f.why), [why], src);
});

t.test('the rule: invalid, an array compared as a prefix ([] passes for any array, [/a/] for [\'a\', \'more\'])', async (t) => {
  const invalid: [string, string[]][] = [
    ['t.match(x, []);', ['an empty array [] (matches any array)']],
    ['t.match(x, { a: [] });', ['a: an empty array [] (matches any array)']],
    ['t.match(x, [/a/]);', ['an array of 1 (a prefix: more items pass)']],
    ['t.match(x, [{ code: /^E$/ }, { code: /^F$/ }]);', ['an array of 2 (a prefix: more items pass)']],
    ['t.match(x, { a: { b: [1, 2] } }, \'nested\');', ['a: b: an array of 2 (a prefix: more items pass)']],
    ['const want = [/a/];\nt.match(x, want);', ['want, an array of 1 (a prefix: more items pass)']],
    ['t.matchStrict(x, { errors: [] });', ['errors: an empty array [] (matches any array)']],
    ['t.has(x, { errors: [] });', ['errors: an empty array [] (matches any array)']],
    ['t.hasStrict(x, [1]);', ['an array of 1 (a prefix: more items pass)']],
    ['await t.resolveMatch(p, []);', ['an empty array [] (matches any array)']],
    ['await t.rejects(p, { errors: [] });', ['errors: an empty array [] (matches any array)']],
    // Both rules: the string leaf, then the array that holds it.
    ["t.match(list, [{ kind: 'failed' }]);", ["kind: a string 'failed'", 'an array of 1 (a prefix: more items pass)']],
    ["t.match(x, { a: { b: ['ok'] } });", ["a: b: a string 'ok'", 'a: b: an array of 1 (a prefix: more items pass)']],
  ];
  for (const [src, whys] of invalid) t.same(substringMatches('x.test.ts', src).map((f) => f.why), whys, src);
});

t.test('the rule: invalid, a null value in an object pattern (t.match({}, { a: null }) passes)', async (t) => {
  const N = 'null (passes when the key is missing too)';
  const invalid: [string, string[]][] = [
    ['t.match(x, { a: null });', [`a: ${N}`]],
    ['t.match(x, { a: { b: null } });', [`a: b: ${N}`]],
    ["t.match(run, { result: /^healthy$/, exitCode: 0, agent: null });", [`agent: ${N}`]],
    ['t.match(x, { a: null as null });', [`a: ${N}`]],
    ["t.match(x, { devices: { '0000:00:06.0': { cor: null } } }, 'nested');", [`devices: '0000:00:06.0': cor: ${N}`]],
    ['const want = { gpu: null };\nt.match(x, want);', [`want, gpu: ${N}`]],
    ['const inner = { b: null };\nt.match(x, { a: inner });', [`a: inner, b: ${N}`]],
    ['t.has(x, { a: null });', [`a: ${N}`]],
    ['await t.resolveMatch(p, { a: null });', [`a: ${N}`]],
    ['await t.rejects(p, { code: null });', [`code: ${N}`]],
    ['t.throws(() => f(), { cause: null });', [`cause: ${N}`]],
    // With the array rule: the array, then the null inside it.
    ['t.match(x, [{ a: null }]);', ['an array of 1 (a prefix: more items pass)', `a: ${N}`]],
  ];
  for (const [src, whys] of invalid) t.same(substringMatches('x.test.ts', src).map((f) => f.why), whys, src);
});

t.test('the rule: valid', async (t) => {
  const valid = [
    't.match(r.stdout, /^healthy$/m);',
    't.match(run, { result: /^healthy$/, exitCode: 0 });',
    't.same(x, { a: null });',
    't.strictSame(x, { a: { b: null } });',
    't.matchOnly(x, { a: null });',
    't.matchOnlyStrict(x, { a: null });',
    't.matchStrict(x, { a: null });',
    't.hasStrict(x, { a: null });',
    't.equal(x.a, null);',
    't.match(x, null);',
    't.throws(() => f(), null, \'a null pattern is no object\');',
    "t.throws(() => writeStamp(d, { job: null }), /writable/);",
    "t.equal(r.stdout, 'healthy\\n');",
    "t.same(run, { result: 'healthy' });",
    "t.hasStrict(run, { result: 'healthy' });",
    "t.notMatch(r.stderr, 'EPIPE');",
    "t.throws(() => f(), /bad/, 'the message names it');",
    "'x'.match('y');",
    "s.match(/a/);",
    "t.match(x, { a: String, b: exactly(`${n} GiB`) });",
    't.same(x, []);',
    't.same(x, { a: [], b: [/a/] });',
    't.strictSame(x, [{ code: /^E$/ }]);',
    't.matchOnly(x, { errors: [] });',
    't.matchOnlyStrict(x, [/a/]);',
    't.notMatch(x, [/a/]);',
    't.match(x[0], { code: /^E$/ });',
    "t.hasOwnProps(x, ['a', 'b']);",
  ];
  for (const src of valid) t.same(substringMatches('x.test.ts', src), [], src);
});

t.test('the suite: no substring match anywhere under test/', async (t) => {
  const root = path.join(REPO, 'test');
  const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).sort();
  t.ok(files.length > 100, `${files.length} files read`);
  const found = files.flatMap((f) => substringMatches(f, readFileSync(path.join(root, f), 'utf8')).map((x) => `test/${f}:${x.line}: ${x.why}: ${x.text}`));
  t.same(found, [], 'use t.equal, t.same, or an anchored RegExp (test/helpers/exactly.ts for a computed string); t.same for an array, or a length check and t.match per item; t.same, or t.equal(x.key, null) beside the t.match, for a null');
});
