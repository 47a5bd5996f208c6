// The report schema's check enum is the registry's (scripts/check-enum.mjs writes it at build): registering a check
// is all it takes, and a checked-in schema that drifted fails here.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CHECK_IDS, GATE_SOURCES } from '../../src/checks/index.js';
import { REPO } from '../helpers/paths.js';

interface Schema { properties: { findings: { items: { properties: { check: { enum: string[] } } } } } }

t.test('schemas/report.schema.json lists exactly the registry ids, in registry order, then the gate sources', async (t) => {
  const s = JSON.parse(readFileSync(path.join(REPO, 'schemas/report.schema.json'), 'utf8')) as Schema;
  t.strictSame(s.properties.findings.items.properties.check.enum, [...CHECK_IDS, ...GATE_SOURCES]);
});
