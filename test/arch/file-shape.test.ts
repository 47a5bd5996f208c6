// Every code file is at most 300 lines and every test file opens with its purpose line (the rule's own cases, then the tree).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { CODE_FILE, lineCount, MAX_LINES, shapeProblems } from './_file-shape.js';

/** The folders that hold code; test/fixtures holds captures, not code. */
const ROOTS = ['src', 'test', 'scripts', 'bench', 'slurm'];
const SKIP = new Set(['test/fixtures', 'node_modules']);

const lines = (n: number): string => 'x\n'.repeat(n);
const purpose = '// What this file tests, in one line.\n';

t.test('line count as wc -l, plus a last line without its newline', async (t) => {
  t.equal(lineCount(''), 0);
  t.equal(lineCount('a'), 1);
  t.equal(lineCount('a\n'), 1);
  t.equal(lineCount('a\nb'), 2);
  t.equal(lineCount('a\n\n'), 2);
});

t.test('the rule: invalid', async (t) => {
  const invalid: [string, string, string][] = [
    ['src/x.ts', lines(MAX_LINES + 1), `src/x.ts: ${MAX_LINES + 1} lines (at most ${MAX_LINES}): split it by topic`],
    ['scripts/x.sh', lines(400), 'scripts/x.sh: 400 lines (at most 300): split it by topic'],
    ['test/a.test.ts', "import t from 'tap';\n", 'test/a.test.ts: does not open with a one-line purpose comment ("// what this file tests")'],
    ['test/a.test.ts', '\n' + purpose, 'test/a.test.ts: does not open with a one-line purpose comment ("// what this file tests")'],
    ['test/a.test.ts', '/* block */\n', 'test/a.test.ts: does not open with a one-line purpose comment ("// what this file tests")'],
    ['test/a.test.ts', '// tests\n', 'test/a.test.ts: does not open with a one-line purpose comment ("// what this file tests")'],
    ['test/a.test.ts', '//no space between the slashes and words\n', 'test/a.test.ts: does not open with a one-line purpose comment ("// what this file tests")'],
  ];
  for (const [file, text, why] of invalid) t.same(shapeProblems(file, text), [why], `${file}: ${JSON.stringify(text.slice(0, 30))}`);
  t.same(shapeProblems('test/b.test.ts', "import t from 'tap';\n" + lines(MAX_LINES)), [
    'test/b.test.ts: 301 lines (at most 300): split it by topic',
    'test/b.test.ts: does not open with a one-line purpose comment ("// what this file tests")',
  ]);
});

t.test('the rule: valid', async (t) => {
  const valid: [string, string][] = [
    ['src/x.ts', lines(MAX_LINES)],
    ['test/a.test.ts', purpose + lines(MAX_LINES - 1)],
    ['test/_helper.ts', "import t from 'tap';\n"],
    ['test/gen/x.ts', ''],
  ];
  for (const [file, text] of valid) t.same(shapeProblems(file, text), [], file);
});

function codeFiles(rel: string): string[] {
  if (SKIP.has(rel)) return [];
  return readdirSync(path.join(REPO, rel), { withFileTypes: true }).flatMap((e) => {
    const p = `${rel}/${e.name}`;
    if (e.isDirectory()) return codeFiles(p);
    return e.isFile() && CODE_FILE.test(e.name) ? [p] : [];
  });
}

t.test('the tree: every code file in shape', async (t) => {
  const files = ROOTS.flatMap(codeFiles).sort();
  t.ok(files.filter((f) => f.endsWith('.test.ts')).length > 150, `${files.length} files read`);
  const found = files.flatMap((f) => shapeProblems(f, readFileSync(path.join(REPO, f), 'utf8')));
  t.same(found, [], 'split long files by topic; open each test file with "// what it tests"');
});
