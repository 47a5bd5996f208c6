// `gdrgate compare` as a user runs it: snapshots, directories and a baseline; exit 0/1/2; JSON valid against its schema.
import t from 'tap';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { validate } from '../helpers/schema.js';
import { base, dev, tree } from './trees.js';

interface Out { equivalent: boolean; exitCode: number; a: { kind: string }; b: { kind: string; class?: string }; differences: { impact: string; area: string; subject: string; a: string; b: string; response: string }[] }

t.test('compare: suspect snapshot against reference directory, snapshot and baseline', async (t) => {
  const dir = t.testdir();
  const ref = await tree(dir, 'ref', base());
  const n = base();
  Object.assign(dev(n, '0000:13:00.0'), { width: 8, maxWidth: 16 });
  dev(n, '0000:12:01.0').acsCtl = 0x0005;
  const sus = await tree(dir, 'sus', n);
  const [susFile, refFile] = [path.join(dir, 'sus.tar.gz'), path.join(dir, 'ref.tar.gz')];
  t.equal(cli(['snapshot', '--root', sus.root, '--out', susFile]).code, 0);
  t.equal(cli(['snapshot', '--root', ref.root, '--out', refFile]).code, 0);

  const same = cli(['compare', refFile, ref.root]);
  t.equal(same.code, 0, 'a snapshot and its own tree are equivalent');
  t.match(same.stdout, /^result: equivalent \(exit 0\)$/m);

  const want = [
    ['critical', 'link-width', '0000:13:00.0', 'Gen5 x8', 'Gen5 x16'],
    ['critical', 'acs', '0000:12:01.0', 'ACSCtl SrcValid+ ReqRedir+', 'ACSCtl all off'],
  ];
  for (const b of [ref.root, refFile]) {
    const r = cli(['compare', susFile, b, '--json']);
    t.equal(r.code, 1, r.stderr);
    const o = JSON.parse(r.stdout) as Out;
    t.same(validate('compare', o), [], 'validates against schemas/compare.schema.json');
    t.match(o, { equivalent: false, exitCode: 1, a: { kind: /^snapshot$/ }, b: { kind: b === refFile ? 'snapshot' : 'directory' } });
    t.same(o.differences.map((d) => [d.impact, d.area, d.subject, d.a, d.b]), want);
  }
  const text = cli(['compare', susFile, refFile]);
  t.equal(text.code, 1);
  t.match(text.stdout, /^CRITICAL {2}link-width {2}0000:13:00\.0 {2}Gen5 x8 +Gen5 x16$/m, 'a table row');
  t.match(text.stdout, /^ +do: Reseat the device or riser/m, 'the response under it');
  t.match(text.stdout, /^result: 2 difference\(s\): 2 critical, 0 major, 0 minor \(exit 1\)$/m);

  const baseline = path.join(dir, 'baseline.json');
  await fsp.writeFile(baseline, cli(['baseline', 'capture', '--root', refFile, '--class', 'hgx2']).stdout);
  const vb = cli(['compare', susFile, baseline, '--json']);
  t.equal(vb.code, 1, vb.stderr);
  const ob = JSON.parse(vb.stdout) as Out;
  t.same(validate('compare', ob), []);
  t.match(ob.b, { kind: /^baseline$/, class: /^hgx2$/ });
  t.same(ob.differences.map((d) => [d.impact, d.area, d.subject, d.a, d.b]), [
    ['critical', 'link-width', '0000:13:00.0', 'Gen5 x8', 'Gen5 x16'],
    ['critical', 'acs', '0000:12:01.0', 'ReqRedir', 'no redirect'],
  ], 'against the baseline: the checks’ findings as differences');
  const good = cli(['compare', refFile, baseline]);
  t.equal(good.code, 0, `the reference matches its own baseline: ${good.stdout}`);
  // JSON may begin with any amount of blank (RFC 8259 whitespace): still the baseline, never read as a tar.
  const padded = path.join(dir, 'padded.json');
  await fsp.writeFile(padded, `${' \n\t\r'.repeat(40)}${await fsp.readFile(baseline, 'utf8')}`);
  const vp = cli(['compare', susFile, padded, '--json']);
  t.equal(vp.code, 1, vp.stderr);
  t.same((JSON.parse(vp.stdout) as Out).differences, ob.differences, 'a baseline after 160 bytes of blank: the same differences');
});

t.test('bad input exits 2', async (t) => {
  const dir = t.testdir({ 'bad.json': '{ nope' });
  const ref = await tree(dir, 'ref', base());
  const other = JSON.parse(cli(['baseline', 'capture', '--root', ref.root, '--match', 'login[01-04]']).stdout) as object;
  await fsp.writeFile(path.join(dir, 'b.json'), JSON.stringify(other));
  const cases: [string[], RegExp][] = [
    [['compare', path.join(dir, 'nope'), ref.root], /no such file or directory/],
    [['compare', ref.root, path.join(dir, 'nope')], /no such file or directory/],
    [['compare', path.join(dir, 'b.json'), ref.root], /not a snapshot archive/],
    [['compare', ref.root, path.join(dir, 'b.json')], /no class matches node "gpu001"/],
    [['compare', ref.root, path.join(dir, 'bad.json')], /not valid JSON/],
    [['compare', ref.root], /Not enough non-option arguments/],
  ];
  for (const [args, msg] of cases) {
    const r = cli(args);
    t.equal(r.code, 2, args.join(' '));
    t.match(r.stderr, msg);
  }
});
