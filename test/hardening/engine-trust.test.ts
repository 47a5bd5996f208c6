// One trust check for every command that runs as root and acts on Slurm or writes state: with a scontrol or a
// config anyone could change, prolog, health, resume (with and without --force) and drill start/run/stop all refuse
// before running that scontrol. The prolog fails open (exit 0, no drain); the commands run by hand exit 2.
import t from 'tap';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { breakLink, makeGateEnv, type GateEnv } from '../helpers/gate-env.js';
import { cli } from '../helpers/cli.js';
import { literal } from '../helpers/exactly.js';

/** A node drained by the gate itself (our reason), so that resume and drill stop have something to act on. */
function drainedEnv(): GateEnv {
  const e = makeGateEnv();
  breakLink(e.tree);
  const p = e.prolog();
  if (p.code !== 1) throw new Error(`arranging a drained node: ${p.stdout}`);
  return e;
}

const byHand: { name: string; args: (e: GateEnv) => string[] }[] = [
  { name: 'resume', args: (e) => ['resume', '--config', e.config, '--node', 'vm'] },
  { name: 'resume --force', args: (e) => ['resume', '--config', e.config, '--node', 'vm', '--force'] },
  { name: 'drill start', args: (e) => ['drill', 'start', '--fault', 'memlock=64K', '--drain', '--config', e.config, '--node', 'vm'] },
  { name: 'drill stop', args: (e) => ['drill', 'stop', '--config', e.config, '--node', 'vm'] },
  { name: 'drill run', args: (e) => ['drill', 'run', '--config', e.config, '--node', 'vm'] },
];

const scontrolOf = (e: GateEnv): string => JSON.parse(readFileSync(e.config, 'utf8')).scontrol as string;
const planted: { what: string; plant: (e: GateEnv) => void; says: (e: GateEnv) => string }[] = [
  { what: 'a scontrol anyone can write', plant: (e) => chmodSync(JSON.parse(readFileSync(e.config, 'utf8')).scontrol as string, 0o777), says: (e) => `refusing ${scontrolOf(e)}: ${scontrolOf(e)} is writable by anyone (mode 777)` },
  { what: 'a config anyone can write (0666)', plant: (e) => chmodSync(e.config, 0o666), says: (e) => `refusing ${e.config}: ${e.config} is writable by anyone (mode 666)` },
];

for (const p of planted) {
  for (const c of byHand) {
    t.test(`${c.name} refuses ${p.what}: exit 2, scontrol never run`, async (t) => {
      const e = drainedEnv();
      rmSync(e.calls, { force: true });
      p.plant(e);
      const r = cli(c.args(e));
      t.equal(r.code, 2, r.stdout + r.stderr);
      t.equal(r.stderr, `gdrgate: ${p.says(e)}\n`);
      t.notOk(existsSync(e.calls), 'scontrol was not run');
    });
  }
  for (const mode of ['prolog', 'health'] as const) {
    t.test(`${mode} refuses ${p.what}: fails open, scontrol never run`, async (t) => {
      const e = drainedEnv();
      rmSync(e.calls, { force: true });
      p.plant(e);
      const r = cli([mode, '--config', e.config], { SLURMD_NODENAME: 'vm', SLURM_JOB_ID: '43' });
      t.equal(r.code, 0, r.stdout);
      t.match(r.stdout, new RegExp(`^config-error: ${literal(p.says(e))}$`, 'm'));
      t.notOk(existsSync(e.calls), 'scontrol was not run');
    });
  }
}

t.test('drill run refuses a Slurm client beside scontrol that anyone can write (it runs them all as root)', async (t) => {
  const e = makeGateEnv();
  const sbatch = path.join(path.dirname(JSON.parse(readFileSync(e.config, 'utf8')).scontrol as string), 'sbatch');
  writeFileSync(sbatch, '#!/bin/sh\nexit 0\n');
  chmodSync(sbatch, 0o777);
  const r = cli(['drill', 'run', '--config', e.config, '--node', 'vm']);
  t.equal(r.code, 2, r.stdout + r.stderr);
  t.equal(r.stderr, `gdrgate: refusing ${sbatch}: ${sbatch} is writable by anyone (mode 777)\n`);
});
