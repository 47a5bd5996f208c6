// gdrgate fleet report and baseline capture --from-fleet as a user runs them (the built CLI) on a generated fleet.
import t from 'tap';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateFleet, type GenFleetNode } from '../gen/fleet.js';
import { cli } from '../helpers/cli.js';
import { validate } from '../helpers/schema.js';
import { badNodeName } from '../../src/slurm/node-name.js';

t.test('fleet report: text worst first, --json to the schema, --html written; no progress when stderr is not a terminal', async (t) => {
  const root = t.testdir();
  const dir = path.join(root, 'fleet');
  const plan = await generateFleet(dir, { n: 20, seed: 13 });
  const faulty = plan.filter((n) => n.fault).map((n) => n.name);
  const text = cli(['fleet', 'report', dir]);
  t.equal(text.code, 1, 'nodes differ: exit 1');
  t.equal(text.stderr, '', 'nothing on stderr (not a TTY: no progress)');
  const lines = text.stdout.split('\n');
  t.equal(lines[0], `gdrgate fleet report — ${dir}: 20 nodes (20 read, 0 unreadable, 0 missing, 0 judged in part) in 1 class(es); 5 differ (3 critical, 2 major, 0 minor)`);
  const flaggedLines = text.stdout.split('\n').filter((l) => /^gpu\d{4}\s+(CRITICAL|MAJOR|MINOR)\s/.test(l)).map((l) => l.split(/\s+/)[0]);
  t.same([...flaggedLines].sort(), [...faulty].sort(), 'exactly the faulty nodes head a line');
  t.same(lines.slice(-2), [`result: ${faulty.length} of 20 nodes differ from their class; 0 not fully judged (0 unreadable, 0 missing, 0 judged in part) (exit 1)`, '']);
  const json = cli(['fleet', 'report', dir, '--json']);
  t.equal(json.code, 1);
  const report = JSON.parse(json.stdout) as { summary: { flagged: number } };
  t.same(validate('fleet-report', report), []);
  t.equal(report.summary.flagged, faulty.length);
  const html = path.join(root, 'out.html');
  const h = cli(['fleet', 'report', dir, '--html', html]);
  t.equal(h.code, 1);
  t.equal(readFileSync(html, 'utf8').split('\n')[0], '<!DOCTYPE html>');
  t.equal(h.stderr, `gdrgate: wrote ${html}\n`);
});

t.test('usage errors exit 2: no directory, --json with --html, a bad host list, collect without --out', async (t) => {
  const r = cli(['fleet', 'report', '/nonexistent/fleet']);
  t.equal(r.code, 2);
  t.equal(r.stderr, 'gdrgate: fleet directory /nonexistent/fleet: no such directory\n');
  const root = t.testdir();
  t.equal(cli(['fleet', 'report', root, '--json', '--html', 'x.html']).code, 2);
  const c = cli(['fleet', 'collect', '--nodes', 'gpu[2-1]', '--out', root]);
  t.equal(c.code, 2, 'a range that runs backwards');
  t.equal(c.stderr, 'gdrgate: --nodes: hostlist "gpu[2-1]": [2-1]: empty range 2-1\n');
  const o = cli(['fleet', 'collect', '--nodes', 'gpu[1-2]']);
  t.equal(o.code, 2, 'no --out');
  t.equal(o.stderr, 'gdrgate: Missing required argument: out\n');
});

t.test('baseline capture --from-fleet: the majority as a valid class with bands; the disagreeing nodes listed; check agrees', async (t) => {
  const root = t.testdir();
  const dir = path.join(root, 'fleet');
  const plan: GenFleetNode[] = await generateFleet(dir, { n: 24, seed: 17 });
  const faulty = plan.filter((n) => n.fault);
  const cap = cli(['baseline', 'capture', '--from-fleet', dir, '--class', 'hgx']);
  t.equal(cap.code, 0, cap.stderr);
  const b = JSON.parse(cap.stdout) as { classes: { match: string[]; probes?: { failBelow: number; p50: number; unit: string }[]; devices: unknown[] }[] };
  t.same(validate('baseline', b), [], 'validates against schemas/baseline.schema.json');
  const cls = b.classes[0]!;
  t.same(cls.match, ['gpu[0001-0024]']);
  t.equal(cls.probes?.length, 8, 'one band per rail');
  for (const p of cls.probes ?? []) t.ok(p.unit === 'Gb/s' && p.failBelow < p.p50 && p.p50 > 380 && p.p50 < 400, `band ${p.failBelow} < p50 ${p.p50} Gb/s`);
  const listed = [...cap.stderr.matchAll(/^gdrgate: {3}(gpu\d{4}):/gm)].map((m) => m[1]);
  t.same(listed.sort(), faulty.map((n) => n.name).sort(), 'the nodes that disagreed, and only those');
  const file = path.join(root, 'fleet-baseline.json');
  writeFileSync(file, cap.stdout);
  t.equal(cli(['baseline', 'validate', file]).code, 0);
  const clean = plan.find((n) => !n.fault)!;
  t.equal(cli(['check', '--root', path.join(dir, `${clean.name}.tar.gz`), '--baseline', file]).code, 0, `${clean.name} passes the fleet's class`);
  const x8 = faulty.find((n) => n.fault!.kind === 'link-x8') ?? faulty.find((n) => n.fault!.kind === 'acs-redirect')!;
  t.equal(cli(['check', '--root', path.join(dir, `${x8.name}.tar.gz`), '--baseline', file]).code, 1, `${x8.name} (${x8.fault!.kind}) fails it`);
  const grouped = JSON.parse(cli(['fleet', 'report', dir, '--baseline', file, '--json']).stdout) as { classes: { name: string; nodes: string[] }[]; summary: { flagged: number } };
  t.same(grouped.classes.map((c) => [c.name, c.nodes.length]), [['hgx', 24]], "--baseline groups by the baseline's classes");
  t.equal(grouped.summary.flagged, faulty.length);
});

t.test('fleet report lists the nodes fleet collect got nothing from (gdrgate-collect.json); a broken summary is a problem, not a crash', async (t) => {
  const root = t.testdir();
  const dir = path.join(root, 'fleet');
  await generateFleet(dir, { n: 6, seed: 5, rates: { 'link-x8': 0, 'acs-redirect': 0, firmware: 0, 'missing-nic': 0, 'weak-rail': 0 } });
  const summary = { nodes: 8, answered: [], missing: [{ node: 'gpu0007', why: 'slurmctld: State=IDLE+NOT_RESPONDING' }, { node: 'gpu0001', why: 'no snapshot' }], srun: null };
  writeFileSync(path.join(dir, 'gdrgate-collect.json'), JSON.stringify(summary));
  const r = cli(['fleet', 'report', dir, '--json']);
  const rep = JSON.parse(r.stdout) as { missing: { node: string; why: string }[] };
  t.same(validate('fleet-report', rep), []);
  t.same(rep.missing.map((m) => m.node), ['gpu0007'], 'the node that sent nothing; gpu0001, whose snapshot is here, counts as read');
  t.equal(rep.missing[0]!.why, 'fleet collect: slurmctld: State=IDLE+NOT_RESPONDING');
  t.equal(r.code, 1, 'a missing node: exit 1');
  const table = cli(['fleet', 'report', dir]).stdout.split('\n\n')[1];
  t.equal(table, [
    'NODE     WORST       DIFFERS FROM ITS CLASS, OR WHY IT WAS NOT JUDGED',
    'gpu0007  MISSING     not judged: fleet collect: slurmctld: State=IDLE+NOT_RESPONDING',
    '                     not judged: no data from the spools',
  ].join('\n'), 'and in the text');
  // One bad entry is said and skipped, the others stand; a node that answered and whose snapshot is gone is named too.
  writeFileSync(path.join(dir, 'gdrgate-collect.json'), JSON.stringify({ answered: [{ node: 'gpu0002' }, { node: 'gpu0009' }], missing: [{ node: '../etc' }, { node: 'gpu[0010-0011]', why: 'x' }, { node: 'gpu0007', why: 'DOWN' }] }));
  const b = cli(['fleet', 'report', dir, '--json']);
  const bad = JSON.parse(b.stdout) as { missing: { node: string; why: string }[]; problems: string[] };
  t.same(bad.missing, [{ node: 'gpu0007', why: 'fleet collect: DOWN' }, { node: 'gpu0009', why: 'answered fleet collect, but no snapshot of it is in the directory now' }]);
  const file = path.join(dir, 'gdrgate-collect.json');
  t.same(bad.problems.filter((p) => p.startsWith(file)), [`${file}: missing node "../etc": ${badNodeName('../etc')}, skipped`, `${file}: missing node "gpu[0010-0011]": ${badNodeName('gpu[0010-0011]')}, skipped`]);
  t.equal(b.code, 1);
  // A summary that is none: said, and the fleet is not all judged (exit 1), though every node read agrees.
  rmSync(path.join(dir, 'gdrgate-collect.json'));
  writeFileSync(path.join(dir, 'gdrgate-collect.json'), '{"missing": 7}');
  const none = cli(['fleet', 'report', dir]);
  t.equal(none.code, 1, 'before: exit 0, "all agree"');
  t.ok(none.stdout.includes('result: all 6 nodes judged agree with their class, but inputs were not taken (see the notes above) (exit 1)'), none.stdout);
});
