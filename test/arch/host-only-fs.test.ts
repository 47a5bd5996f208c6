// Only src/host/ touches the file system: every module under src/ is parsed and one outside src/host/ that loads fs or fs/promises fails (the rule's own cases first).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { fsImports, type FsImport } from './_fs-imports.js';

const SRC = path.join(REPO, 'src');
/** Modules outside src/host/ allowed to load fs, each with its reason. None: every file operation goes through src/host/. */
const ALLOWED: Readonly<Record<string, string>> = {};

const show = (f: FsImport): string => `${f.line}: ${f.how} '${f.spec}'`;

t.test('the rule: invalid', async (t) => {
  const invalid: [string, string[]][] = [
    ["import fs from 'node:fs';", ["1: import 'node:fs'"]],
    ["import { readFileSync } from 'fs';", ["1: import 'fs'"]],
    ["import type { Stats } from 'node:fs';", ["1: import 'node:fs'"]],
    ["import * as fsp from 'node:fs/promises';", ["1: import 'node:fs/promises'"]],
    ["import 'fs/promises';", ["1: import 'fs/promises'"]],
    ["export { readFileSync } from 'node:fs';", ["1: export from 'node:fs'"]],
    ["export * from 'fs';", ["1: export from 'fs'"]],
    ["import fs = require('node:fs');", ["1: import = require 'node:fs'"]],
    ["const fs = await import('node:fs');", ["1: import() 'node:fs'"]],
    ['const fs = await import(`fs/promises`);', ["1: import() 'fs/promises'"]],
    ["const { statSync } = require('fs');", ["1: require() 'fs'"]],
    ["import path from 'node:path';\nfunction f() {\n  return require('node:fs').existsSync(path.sep);\n}", ["3: require() 'node:fs'"]],
    ["import a from 'fs';\nexport type { Stats } from 'node:fs';", ["1: import 'fs'", "2: export from 'node:fs'"]],
  ];
  for (const [code, want] of invalid) t.same(fsImports(code).map(show), want, code);
});

t.test('the rule: valid', async (t) => {
  const valid = [
    "import path from 'node:path';",
    "import { exists } from './host/entries.js';",
    "import { FsHost } from '../host/fs-host.js';",
    "import x from 'fs-extra';",
    "import x from 'node:fsx';",
    "// import fs from 'node:fs';",
    "/* require('fs') */ const a = 1;",
    "const s = \"import fs from 'node:fs'\";",
    "const s = `require('fs')`;",
    "x.require('fs');",
    "const m = await import(name);",
    "const r = require(name);",
  ];
  for (const code of valid) t.same(fsImports(code).map(show), [], code);
});

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? modules(path.join(dir, e.name)) : /\.[cm]?[jt]s$/.test(e.name) ? [path.join(dir, e.name)] : []));
}

const all = modules(SRC).map((f) => path.relative(SRC, f).split(path.sep).join('/'));
const outside = all.filter((m) => !m.startsWith('host/'));
const offenders = outside.flatMap((m) => fsImports(readFileSync(path.join(SRC, m), 'utf8'), m).map((f) => `src/${m}:${show(f)}`));

t.test('no module outside src/host/ loads fs or fs/promises', async (t) => {
  const bad = offenders.filter((o) => ALLOWED[o.slice('src/'.length, o.indexOf(':'))] === undefined);
  t.same(bad, [], `move these file operations into src/host/:\n${bad.join('\n')}`);
});

t.test('every allow-list entry names a module that still needs it, with its reason', async (t) => {
  for (const [m, why] of Object.entries(ALLOWED)) {
    t.ok(why.trim().length > 0, `${m}: a reason`);
    t.ok(offenders.some((o) => o.startsWith(`src/${m}:`)), `${m}: still loads fs (else drop the entry)`);
  }
});

t.test('the guard reads the tree: src/host/ modules load fs, found by the same parse', async (t) => {
  t.ok(outside.length > 200, `modules outside src/host/: ${outside.length}`);
  t.same(fsImports(readFileSync(path.join(SRC, 'host/files.ts'), 'utf8')).map(show), ["6: import 'node:fs'"]);
  t.same(fsImports(readFileSync(path.join(SRC, 'host/whole-file.ts'), 'utf8')).map(show), ["3: import 'node:fs'", "5: export from 'node:fs'"]);
});
