// Bad baselines and configs: a clear error naming the file, the right exit code, and never a drain.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli } from '../helpers/cli.js';
import { literal } from '../helpers/exactly.js';
import { makeGateEnv } from '../helpers/gate-env.js';
import { H200 } from '../helpers/paths.js';

const env = makeGateEnv();
const good = JSON.parse(readFileSync(JSON.parse(readFileSync(env.config, 'utf8')).baseline, 'utf8'));
const cls = good.classes[0];

// [name, file text, error, does `baseline validate` catch it (it cannot know which node will read it)]
const cases: [string, string, string, boolean?][] = [
  ['invalid JSON', '{"version": 1, "classes": [', 'baseline is not valid JSON: Unexpected end of JSON input'],
  ['empty file', '', 'baseline is empty'],
  ['wrong types', JSON.stringify({ version: 1, classes: [{ ...cls, memlockMin: 'lots' }] }), '/classes/0/memlockMin: must be equal to constant: "unlimited"; /classes/0/memlockMin: must be integer; /classes/0/memlockMin: must match exactly one schema in oneOf'],
  ['unknown key', JSON.stringify({ version: 1, classes: [{ ...cls, colour: 'blue' }] }), '/classes/0: must NOT have additional properties (colour)'],
  ['duplicate classes', JSON.stringify({ version: 1, classes: [cls, cls] }), '/classes/1/name: duplicate class "test"'],
  ['a pattern that matches nothing', JSON.stringify({ version: 1, classes: [{ ...cls, match: ['gpu[001-004]'] }] }), 'no class matches node "vm" (classes: test [gpu[001-004]])', false],
  ['an invalid regex', JSON.stringify({ version: 1, classes: [{ ...cls, match: ['/gpu[/'] }] }), '/classes/0/match/0: invalid regex in host pattern "/gpu[/": unterminated character class at offset 5'],
  ['no classes', JSON.stringify({ version: 1, classes: [] }), '/classes: must NOT have fewer than 1 items'],
  ['version 2', JSON.stringify({ version: 2, classes: [cls] }), '/version: must be equal to constant: 1'],
  // Each entry is judged: a GPU's address again with role "nic" read "NIC missing" and drained (the review of d70dc8e).
  ['a device twice', JSON.stringify({ version: 1, classes: [{ ...cls, devices: [...cls.devices, { ...cls.devices[0], role: 'nic' }] }] }), '/classes/0/devices/1: duplicate device 0000:00:06.0 (as /classes/0/devices/0)'],
  ['a GPU↔NIC pair twice', JSON.stringify({ version: 1, classes: [{ ...cls, paths: [{ gpu: '0000:00:06.0', nic: 'mlx5_0', class: 'NODE' }, { gpu: '0000:00:06.0', nic: 'mlx5_0', class: 'PIX' }] }] }), '/classes/0/paths/1: duplicate GPU↔NIC pair 0000:00:06.0 mlx5_0 (as /classes/0/paths/0)'],
];

for (const [name, text, want, byValidate = true] of cases) {
  t.test(`baseline: ${name}`, async (t) => {
    const file = path.join(env.dir, `bad-${name.replace(/\W+/g, '-')}.json`);
    writeFileSync(file, text);
    const v = cli(['baseline', 'validate', file]);
    t.equal(v.code, byValidate ? 2 : 0, `validate exits ${byValidate ? 2 : 0}`);
    const c = cli(['check', '--root', H200, '--baseline', file, '--node', 'vm']);
    t.equal(c.code, 2, 'check exits 2');
    t.equal(c.stderr.slice(0, `gdrgate: ${file}: `.length), `gdrgate: ${file}: `, 'names the file');
    t.equal(c.stderr, `gdrgate: ${file}: ${want}\n`);
    const before = env.drainCalls().length;
    const p = env.prolog(['--baseline', file]);
    t.equal(p.code, 0, 'prolog fails open');
    t.match(p.stdout, new RegExp(`^gdrgate prolog — root ${literal(env.tree)}, no baseline \\(universal rules only\\)\nSTATUS  CHECK  SUBJECT  FINDING\nresult: config-error \\(exit 0\\) — 0 fail, 0 error, 0 warn, 0 pass, 0 skip\nconfig-error: ${literal(`${file}: ${want}`)}\ngdrgate prolog node=vm job=42 result=config-error exit=0 \\d+ms action=none\n$`));
    t.equal(env.drainCalls().length, before, 'no drain');
    t.match(readFileSync(env.log, 'utf8'), new RegExp(`^\\{"level":50,"time":"[^"]+","tool":"gdrgate","pid":\\d+,"node":"vm","job":"42","outcome":\\{"kind":"config-error","message":${literal(JSON.stringify(`${file}: ${want}`))}\\},"msg":"gdrgate could not judge this node; letting the job run \\(fail-open\\)"\\}$`, 'm'));
  });
}

t.test('huge baseline is refused before parsing', async (t) => {
  const file = path.join(env.dir, 'huge.json');
  writeFileSync(file, ' '.repeat(17 * 1024 * 1024) + '{}');
  const v = cli(['baseline', 'validate', file]);
  t.equal(v.code, 2);
  t.equal(v.stderr, `gdrgate: ${file}: baseline is 17825794 bytes, more than 16777216\n`);
});

t.test('config errors: fail-open by default, fail-closed drains with a gdrgate: config reason', async (t) => {
  const e = makeGateEnv();
  writeFileSync(e.config, '{"baseline": 5}');
  const open = e.prolog();
  t.equal(open.code, 0);
  t.match(open.stdout, new RegExp(`^gdrgate prolog — root /, no baseline \\(universal rules only\\)\nSTATUS  CHECK  SUBJECT  FINDING\nresult: config-error \\(exit 0\\) — 0 fail, 0 error, 0 warn, 0 pass, 0 skip\nconfig-error: ${literal(e.config)}: /baseline: must be string\ngdrgate prolog node=vm job=42 result=config-error exit=0 \\d+ms action=none\n$`));
  t.same(e.drainCalls(), []);
  writeFileSync(e.config, JSON.stringify({ ...JSON.parse('{}'), baseline: '/nonexistent/baseline.json', scontrol: path.join(e.dir, 'scontrol'), stateDir: path.join(e.dir, 'run'), spool: path.join(e.dir, 'spool'), onConfigError: 'closed' }));
  const closed = e.prolog();
  t.equal(closed.code, 1);
  t.equal(e.drainCalls().length, 1);
  t.equal(e.drainCalls()[0], 'update nodename=vm state=drain reason=gdrgate: config refusing /nonexistent/baseline.json: /nonexistent/baseline.json: ENOENT: no such file or directory, lstat /nonexistent job=42');
  t.equal(e.drainCalls()[0]?.split(' ').at(-1), 'job=42');
});

t.test('files anyone could change are refused (fail-open, no drain)', async (t) => {
  const e = makeGateEnv();
  const base = JSON.parse(readFileSync(e.config, 'utf8')).baseline as string;
  (await import('node:fs')).chmodSync(base, 0o666);
  const r = e.prolog();
  t.equal(r.code, 0);
  t.match(r.stdout, new RegExp(`^gdrgate prolog — root ${literal(e.tree)}, no baseline \\(universal rules only\\)\nSTATUS  CHECK  SUBJECT  FINDING\nresult: config-error \\(exit 0\\) — 0 fail, 0 error, 0 warn, 0 pass, 0 skip\nconfig-error: refusing ${literal(base)}: ${literal(base)} is writable by anyone \\(mode 666\\)\ngdrgate prolog node=vm job=42 result=config-error exit=0 \\d+ms action=none\n$`));
  t.same(e.drainCalls(), []);
});

t.test("an untrusted config's own policy is not obeyed: onConfigError closed in a file anyone may write drains nothing", async (t) => {
  const e = makeGateEnv();
  e.writeConfig({ onConfigError: 'closed', onInternalError: 'closed' });
  (await import('node:fs')).chmodSync(e.config, 0o666);
  const r = e.prolog();
  t.equal(r.code, 0, r.stdout);
  t.equal(/^gdrgate prolog node=vm job=42 result=config-error exit=0 \d+ms action=none$/m.test(r.stdout), true, r.stdout);
  t.same(e.drainCalls(), []);
});
