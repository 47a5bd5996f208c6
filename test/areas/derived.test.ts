// What derives from the area registry stays derived: drill start --help lists every fault the grammar accepts, and the compare schema's areas are compare's own order.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { AREAS } from '../../src/areas/index.js';
import { compareAreas } from '../../src/compare/order.js';
import { parseFault } from '../../src/drill/fault.js';
import { cli } from '../helpers/cli.js';
import { REPO } from '../helpers/paths.js';

/** One fault of every family, as an operator writes it (the docs' and README's examples). */
const EXAMPLES = [
  'pcie-link:0000:17:00.0=x8',
  'pcie-acs:0000:16:02.0=ReqRedir',
  'pcie-relaxed-ordering:0000:19:00.0=off',
  'pcie-throttle:0000:17:00.0=2',
  'pcie-aer:0000:18:00.0=fatal',
  'pcie-payload:0000:17:00.0=mps512',
  'gpu-bar1:0000:18:00.0=256M',
  'memlock=64K',
  'gpudirect-mechanism=none',
];

t.test('drill start --help names every fault family the grammar accepts', async (t) => {
  const r = cli(['drill', 'start', '--help']);
  t.equal(r.code, 0, r.stderr);
  // yargs wraps the description: read it as one line.
  const help = r.stdout.replace(/\s+/g, ' ');
  for (const text of EXAMPLES) {
    t.equal(parseFault(text).ok, true, `${text} parses`);
    const family = text.slice(0, text.search(/[:=]/));
    t.ok(help.includes(` ${family}:`) || help.includes(` ${family}=`), `--help lists ${family}`);
  }
  for (const a of AREAS) t.ok(help.includes(a.fault.syntax.replace(/\s+/g, ' ')), `--help shows ${a.fault.syntax}`);
});

interface CompareSchema { $defs: { difference: { properties: { area: { enum: string[] } } } } }

t.test('schemas/compare.schema.json lists exactly the areas compare sorts by (scripts/check-enum.mjs writes them)', async (t) => {
  const s = JSON.parse(readFileSync(path.join(REPO, 'schemas/compare.schema.json'), 'utf8')) as CompareSchema;
  t.strictSame(s.$defs.difference.properties.area.enum, [...compareAreas()]);
});
