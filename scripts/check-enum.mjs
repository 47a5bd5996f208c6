// Build step: writes the schemas' enums that derive from a registry (dist/, after tsc): the report schema's check enum
// from the check registry, the compare schema's area enum from compare's order (base areas and area records). A new
// check or area record is listed by being registered. `--check`, and any run under CI: change nothing, exit 1 when a
// checked-in schema differs (a clone must build from what is committed).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dist = (p) => import(new URL(`../dist/${p}`, import.meta.url).href);
const { CHECK_IDS, GATE_SOURCES } = await dist('checks/index.js');
const { compareAreas } = await dist('compare/order.js');
const list = (xs) => JSON.stringify(xs).replace(/","/g, '", "');

// Each: the one line of the schema that holds the enum; the rest of the file is left as written.
const targets = [
  { file: 'report.schema.json', what: 'check enum', line: /("check": \{ "enum": )\[[^\]]*\]/, want: list([...CHECK_IDS, ...GATE_SOURCES]) },
  { file: 'compare.schema.json', what: 'area enum', line: /("area": \{\s*"enum": )\[[^\]]*\]/, want: list([...compareAreas()]) },
];
let drift = false;
for (const t of targets) {
  const schemaFile = fileURLToPath(new URL(`../schemas/${t.file}`, import.meta.url));
  const text = readFileSync(schemaFile, 'utf8');
  if (!t.line.test(text)) throw new Error(`${schemaFile}: no ${t.what} line`);
  const next = text.replace(t.line, `$1${t.want}`);
  if (next === text) continue;
  if (process.argv.includes('--check') || process.env.CI) {
    process.stderr.write(`${schemaFile}: ${t.what} differs from the registry; run node scripts/check-enum.mjs\n`);
    drift = true;
  } else writeFileSync(schemaFile, next);
}
if (drift) process.exit(1);
