// A baseline or config that names one key twice in an object is ambiguous (JSON.parse keeps the last, other readers the
// first): refused, naming the key and its line, never read as one of the two. Seeded: a key of a real captured baseline
// and config doubled at any depth; the same name spelt with escapes; the same key in two objects, or as a value, is fine.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadBaseline } from '../../src/baseline/load.js';
import { loadConfig } from '../../src/config.js';
import { cli } from '../helpers/cli.js';
import { REPO } from '../helpers/paths.js';
import { seeded } from '../helpers/seeded.js';

const captured = cli(['baseline', 'capture', '--root', path.join(REPO, 'examples/h200-vm'), '--class', 'h200', '--match', 'gpu[001-064]']);
const BASELINE = captured.stdout;

const why = async (p: Promise<unknown>): Promise<string | null> =>
  p.then(
    () => null,
    (e: unknown) => (e as Error).message,
  );

t.test('a class with "match" twice: validate refuses it (exit 2), saying which key and where', async (t) => {
  t.equal(captured.code, 0, 'captured');
  const dir = t.testdir({});
  const file = path.join(dir, 'b.json');
  // An admin appended a second match list to the class: JSON.parse kept it, the first went unsaid.
  writeFileSync(file, BASELINE.replace('"match": [', '"match": ["login*"],\n      "match": ['));
  const v = cli(['baseline', 'validate', file]);
  t.strictSame({ code: v.code, stdout: v.stdout, stderr: v.stderr }, { code: 2, stdout: '', stderr: `gdrgate: ${file}: baseline names the key "match" twice in one object (line 7): which one is meant cannot be told\n` });
});

t.test('a config with "onConfigError" twice is refused; escapes spelling the same name are the same key', async (t) => {
  const dir = t.testdir({});
  const file = path.join(dir, 'config.json');
  writeFileSync(file, '{\n  "baseline": "/etc/gdrgate/baseline.json",\n  "onConfigError": "open",\n  "onConfigError": "closed"\n}\n');
  t.equal(await why(loadConfig(file)), `${file}: config names the key "onConfigError" twice in one object (line 4): which one is meant cannot be told`);
  writeFileSync(file, '{"baseline": "/a", "deadlineMs": 100, "deadline\\u004ds": 6000}');
  t.equal(await why(loadConfig(file)), `${file}: config names the key "deadlineMs" twice in one object (line 1): which one is meant cannot be told`);
  // The same name as a value, or inside a string, is no key (the same key in two objects: the captured baseline's "bdf").
  writeFileSync(file, '{"baseline": "/a", "checks": ["baseline", "baseline"], "logFile": "/x\\": \\"baseline\\": {"}');
  t.equal(await why(loadConfig(file)), null);
});

t.test('seeded: any key of a real baseline doubled in its object is refused; the file as captured loads', async (t) => {
  const dir = t.testdir({});
  const file = path.join(dir, 'b.json');
  writeFileSync(file, BASELINE);
  t.equal(await why(loadBaseline(file)), null, 'as captured: loads');
  const g = seeded(0xd0b1e);
  // Every "key": occurrence of the pretty-printed capture: doubling one duplicates a key of its object.
  const keys = [...BASELINE.matchAll(/^( *)"([A-Za-z0-9_]+)": /gm)].map((m) => ({ at: m.index, indent: m[1]!, key: m[2]! }));
  t.ok(keys.length > 40, `${keys.length} keys in the captured class`);
  const wrong: string[] = [];
  for (let i = 0; i < 60; i++) {
    const k = keys[g.int(keys.length)]!;
    const line = BASELINE.slice(0, k.at).split('\n').length;
    // A second copy of the key, with some value, before the first one: the first is the one the file meant to keep.
    const text = `${BASELINE.slice(0, k.at)}${k.indent}"${k.key}": ${g.pick(['null', '0', '"x"', '[]', '{}'])},\n${BASELINE.slice(k.at)}`;
    writeFileSync(file, text);
    const got = await why(loadBaseline(file));
    const want = `${file}: baseline names the key "${k.key}" twice in one object (line ${line + 1}): which one is meant cannot be told`;
    if (got !== want) wrong.push(`${k.key} at line ${line}: ${got}`);
  }
  t.strictSame(wrong, []);
});
