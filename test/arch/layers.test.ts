// The layers (DESIGN §2): nothing below the CLI imports it, and the engine is the one pipeline. Reads every
// module under src/ as text and follows its relative imports (static and dynamic), so a new violation fails here.
// Also: the node model has one encoding of "could not read" (a Fact), never a nullable field.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? modules(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

/** Relative specifiers of `import … from '…'`, `export … from '…'` and `import('…')`, resolved to src-relative paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.[^']+)'/g)].map((m) => m[1]!);
  return specs.map((s) => path.relative(SRC, path.resolve(path.dirname(file), s)).replace(/\.js$/, '.ts'));
}

const all = modules(SRC).map((f) => path.relative(SRC, f));
const inCli = (p: string): boolean => p.startsWith('cli/');

t.test('nothing outside src/cli/ imports from src/cli/ (the entry src/cli.ts excepted)', async (t) => {
  const bad = all.filter((m) => !inCli(m) && m !== 'cli.ts').flatMap((m) => importsOf(path.join(SRC, m)).filter(inCli).map((i) => `${m} → ${i}`));
  t.same(bad, [], bad.join('\n'));
});

t.test('the pipeline is written once: only the engine builds an inventory or runs the checks', async (t) => {
  const users = (sym: RegExp): string[] => all.filter((m) => sym.test(readFileSync(path.join(SRC, m), 'utf8')));
  // buildInventory(…) and runChecks(…) called (not merely defined or typed) outside engine/, inventory/ and runner/.
  const builders = users(/\bbuildInventory\(/).filter((m) => !m.startsWith('engine/') && !m.startsWith('inventory/'));
  const runners = users(/\brunChecks\(/).filter((m) => !m.startsWith('engine/') && !m.startsWith('runner/'));
  // The snapshot records what the inventory read (it builds one through its memo Host): its own purpose, not a gate.
  t.same(builders.filter((m) => !m.startsWith('snapshot/')), [], `inventory built outside the engine: ${builders.join(', ')}`);
  t.same(runners.filter((m) => !m.startsWith('compare/')), [], `checks run outside the engine: ${runners.join(', ')}`);
});

t.test('the guard sees real imports (it would catch a violation)', async (t) => {
  const serve = importsOf(path.join(SRC, 'agent/serve.ts'));
  t.ok(serve.includes('engine/prolog.ts'), `agent/serve.ts imports: ${serve.join(', ')}`);
  const cli = importsOf(path.join(SRC, 'cli.ts'));
  t.ok(cli.some(inCli), 'src/cli.ts imports the CLI');
});

t.test('exit codes are numbers in one place: no command returns a bare 1, 2 or 3', async (t) => {
  const bad = all.filter((m) => inCli(m) || m.startsWith('drill/') || m.startsWith('task/')).flatMap((m) => {
    const lines = readFileSync(path.join(SRC, m), 'utf8').split('\n');
    return lines.flatMap((l, i) => (/\breturn\s+[123]\s*;|\?\s*[0-3]\s*:\s*[0-3]\b/.test(l) ? [`${m}:${i + 1}: ${l.trim()}`] : []));
  });
  t.same(bad, [], bad.join('\n'));
});

t.test('one encoding of unknown: node-read fields are Facts, never `| null`, and Known/optText/optParsed are gone', async (t) => {
  const lines = readFileSync(path.join(SRC, 'model/inventory.ts'), 'utf8').split('\n');
  const nullable: string[] = [];
  let owner = '';
  for (const l of lines) {
    const decl = /^export (?:interface|type) (\w+)/.exec(l);
    if (decl) owner = decl[1]!;
    const field = /^\s+readonly (\w+)\??: (.*);/.exec(l);
    if (field && /\|\s*null\b/.test(field[2]!)) nullable.push(`${owner}.${field[1]}: ${field[2]}`);
  }
  t.same(nullable, [], `model/inventory.ts: a field read from the node is a Fact<T> (absent / unknown), not T | null:\n${nullable.join('\n')}`);
  const old = all.filter((m) => /\b(Known<|optText\(|optParsed\()/.test(readFileSync(path.join(SRC, m), 'utf8')));
  t.same(old, [], `the second and third encodings of unknown are back: ${old.join(', ')}`);
});
