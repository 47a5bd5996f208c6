// Build step: writes the report schema's check enum from the registry (dist/checks/index.js, after tsc), so a new
// check is listed by being registered. `--check`, and any run under CI: change nothing, exit 1 when the checked-in
// schema differs (a clone must build from what is committed).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const schemaFile = fileURLToPath(new URL('../schemas/report.schema.json', import.meta.url));
const { CHECK_IDS, GATE_SOURCES } = await import(new URL('../dist/checks/index.js', import.meta.url).href);
const want = JSON.stringify([...CHECK_IDS, ...GATE_SOURCES]).replace(/","/g, '", "');
const text = readFileSync(schemaFile, 'utf8');
// The one `"check": { "enum": [...] }` line of the findings' items; the rest of the file is left as written.
const line = /("check": \{ "enum": )\[[^\]]*\]/;
if (!line.test(text)) throw new Error(`${schemaFile}: no "check": { "enum": [...] } line`);
const next = text.replace(line, `$1${want}`);
if (process.argv.includes('--check') || process.env.CI) {
  if (next !== text) {
    process.stderr.write(`${schemaFile}: check enum differs from the registry; run node scripts/check-enum.mjs\n`);
    process.exit(1);
  }
} else if (next !== text) writeFileSync(schemaFile, next);
