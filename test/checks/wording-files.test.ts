// The wording files (src/**/*.json): each valid against schemas/wording.schema.json, each the one source of its record's wording, and a wrong one refused by name.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { AnyCode, Code } from '../../src/checks/catalog.js';
import { CHECK_IDS, CHECKS } from '../../src/checks/index.js';
import { defineCheck, finder } from '../../src/checks/types.js';
import { LAYER_NAMES, worded } from '../../src/checks/wording.js';
import { BANDWIDTH, type BwCode } from '../../src/epilog/bandwidth.js';
import { JOB_VIEW, type TaskCode } from '../../src/task/records.js';
import AER from '../../src/checks/pcie-aer.json' with { type: 'json' };
import { REPO } from '../helpers/paths.js';

const read = (rel: string): unknown => JSON.parse(readFileSync(path.join(REPO, rel), 'utf8'));
const schema = read('schemas/wording.schema.json') as { $defs: { codes: { additionalProperties: { properties: { layer: { enum: string[] } } } } } };
const validate = new Ajv2020({ allErrors: true, strict: true }).compile(schema);
const errors = (data: unknown): string[] => (validate(data) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath}: ${e.message}`));

/** Every JSON file under src/, relative to the repository. */
function jsonFiles(rel: string): string[] {
  return readdirSync(path.join(REPO, rel), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? jsonFiles(`${rel}/${e.name}`) : e.name.endsWith('.json') ? [`${rel}/${e.name}`] : []));
}

/** The error a call throws, or undefined. */
function thrown(fn: () => unknown): Error | undefined {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  return undefined;
}

interface CheckFile {
  title: string;
  reasonLabel: string;
  docs: string;
  codes: Record<string, unknown>;
}

t.test('the JSON files in src/ are exactly the wording files: one per check, the job view\'s and the probes\'', async (t) => {
  const want = [...CHECK_IDS.map((id) => `src/checks/${id}.json`), 'src/epilog/bandwidth.json', 'src/task/records.json'].sort();
  t.same(jsonFiles('src').sort(), want);
});

t.test('every wording file is valid against schemas/wording.schema.json', async (t) => {
  for (const f of jsonFiles('src')) t.same(errors(read(f)), [], f);
});

t.test('each record takes its wording from its file, unchanged', async (t) => {
  for (const c of CHECKS) {
    const file = read(`src/checks/${c.id}.json`) as CheckFile;
    t.same({ title: c.title, reasonLabel: c.reasonLabel, docs: c.docs, codes: c.codes }, file, c.id);
    t.same(Object.keys(c), ['id', 'title', 'reasonLabel', 'codes', 'docs', 'run'], `${c.id}: the record's fields`);
  }
  const task = read('src/task/records.json') as { records: Record<string, { codes: unknown }> };
  t.same(JOB_VIEW.map((r) => r.id), Object.keys(task.records), 'the job view\'s records in the file\'s order');
  for (const r of JOB_VIEW) t.same(r.codes, task.records[r.id]?.codes, r.id);
  t.same(BANDWIDTH.codes, (read('src/epilog/bandwidth.json') as { codes: unknown }).codes, 'bandwidth');
});

t.test('every code names a layer of the Layer union, and the schema lists the same layers', async (t) => {
  t.same([...LAYER_NAMES], ['server', 'fabric', 'scheduler', 'security', 'application']);
  t.same(schema.$defs.codes.additionalProperties.properties.layer.enum, [...LAYER_NAMES]);
  const records = [...CHECKS, ...JOB_VIEW, BANDWIDTH];
  for (const r of records) for (const [code, w] of Object.entries(r.codes)) t.ok(LAYER_NAMES.includes(w.layer) && w.tells.trim() !== '' && w.do.trim() !== '', `${r.id} ${code}`);
});

t.test('a wrong wording is refused where it is loaded, naming the file and the code', async (t) => {
  const ok = { tells: 'what it tells', do: 'what to do', layer: 'server' };
  const cases: [string, Record<string, unknown>, string][] = [
    ['a layer outside the union', { 'x-ok': ok, 'x-bad': { ...ok, layer: 'rack' } }, 'src/x.json: x-bad: layer "rack" is not one of server, fabric, scheduler, security, application'],
    ['no layer', { 'x-bad': { tells: 't', do: 'd' } }, 'src/x.json: x-bad: layer missing is not one of server, fabric, scheduler, security, application'],
    ['a blank tells and no do', { 'x-bad': { tells: ' ', layer: 'fabric' } }, 'src/x.json: x-bad: tells is not a non-empty string; x-bad: do is not a non-empty string'],
    ['not an object', { 'x-bad': 'None.' }, 'src/x.json: x-bad: not an object with tells, do and layer'],
    ['no codes', {}, 'src/x.json: no codes'],
  ];
  for (const [what, codes, message] of cases) {
    const e = thrown(() => worded('src/x.json', codes as never));
    t.equal(e?.name, 'WordingError', what);
    t.equal(e?.message, message, what);
  }
  t.same(worded('src/x.json', { 'x-ok': ok }), { 'x-ok': ok }, 'a valid one passes through');
});

t.test('defineCheck checks its file as the check loads: the error names src/checks/<id>.json', async (t) => {
  const run = () => [];
  const good = { title: 'T', reasonLabel: 'x', docs: 'docs/checks/x-check.md', codes: { 'x-ok': { tells: 't', do: 'd', layer: 'server' } } };
  t.equal(defineCheck('x-check', good, { run }).codes['x-ok'].layer, 'server');
  const e = thrown(() => defineCheck('x-check', { ...good, codes: { 'x-ok': { tells: 't', do: 'd', layer: 'Server' } } }, { run }));
  t.equal(e?.message, 'src/checks/x-check.json: x-ok: layer "Server" is not one of server, fabric, scheduler, security, application');
  const noTitle = thrown(() => defineCheck('x-check', { ...good, title: '' }, { run }));
  t.equal(noTitle?.message, 'src/checks/x-check.json: title is not a non-empty string');
});

t.test('the schema refuses what the loader refuses', async (t) => {
  const aer = read('src/checks/pcie-aer.json') as CheckFile;
  const bad = { ...aer, codes: { ...aer.codes, 'aer-ok': { tells: 't', do: 'd', layer: 'rack' } } };
  t.ok(errors(bad).includes('/codes/aer-ok/layer: must be equal to one of the allowed values'), errors(bad).join('\n'));
  t.ok(errors({ ...aer, codes: { 'aer-ok': { tells: '', do: 'd', layer: 'server' } } }).includes('/codes/aer-ok/tells: must match pattern "\\S"'));
  t.not(errors({ ...aer, extra: 1 }).length, 0, 'no other field');
});

t.test('a code no record words fails tsc: the JSON keys stay literal types', async (t) => {
  const f = finder('pcie-aer', AER.codes);
  t.equal(f('aer-ok', 'pass', 'x', 'm').code, 'aer-ok');
  // @ts-expect-error 'aer-nope' is not a key of pcie-aer.json's codes
  const notAer: Parameters<typeof f>[0] = 'aer-nope';
  // @ts-expect-error 'aer-nope' is no check's code
  const notNode: Code = 'aer-nope';
  // @ts-expect-error a node check's code is not a job-view code
  const notTask: TaskCode = 'aer-ok';
  // @ts-expect-error a job-view code is not a probe's
  const notBw: BwCode = 'job-memlock-ok';
  const any: AnyCode[] = ['aer-ok', 'job-memlock-ok', 'bw-ok'];
  t.same([notAer, notNode, notTask, notBw, ...any], ['aer-nope', 'aer-nope', 'aer-ok', 'job-memlock-ok', 'aer-ok', 'job-memlock-ok', 'bw-ok']);
});
