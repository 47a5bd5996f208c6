// What bash reads for the agent (slurm/taskprolog.sh) must be what Node reads for gdrgate task, whatever the shell options (the job's SHELLOPTS, a .conf's) and however the files are (unreadable, a directory, NUL bytes): the same lines, exit code and task record, or gdrgate judges.
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { said, startRig, type Rig } from './_agent-rig.js';

if (process.getuid?.() !== 0) t.skip('needs root (the agent is root, the TaskProlog runs as the job uid)', () => {});
else await main();

async function main(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => rig.close());
  const GPU = 'sys/bus/pci/devices/0000:88:00.0';
  let job = 700;
  /** `mut` changes the tree (and returns its undo); the view's two answers must match. */
  const same = async (t: Test, name: string, o: { env?: Record<string, string>; extra?: string; mut?: (tree: string) => () => void; answered?: boolean }): Promise<void> => {
    const id = String(job++);
    t.equal(rig.prolog(id, '0,1'), 0, `${name}: prolog`);
    const undo = o.mut?.(rig.tree);
    try {
      const b = await rig.both(id, { SLURM_STEP_ID: '0', SLURM_JOB_GPUS: '0,1', ...o.env }, o.extra);
      t.same(said(b.viaAgent), said(b.viaNode), `${name}: the same lines and exit code`);
      t.same(b.agentRecord, b.nodeRecord, `${name}: the same task record`);
      if (o.answered) t.equal(b.agentRuns, 0, `${name}: the agent answered`, { stderr: b.viaAgent.stderr });
    } finally {
      undo?.();
    }
  };
  const chmod = (p: string, m: number) => (tree: string) => {
    const f = path.join(tree, p);
    const o = fs.statSync(f).mode & 0o7777;
    fs.chmodSync(f, m);
    return () => fs.chmodSync(f, o);
  };
  const swap = (p: string, make: (f: string) => void) => (tree: string) => {
    const f = path.join(tree, p);
    fs.renameSync(f, f + '.keep');
    make(f);
    return () => {
      fs.rmSync(f, { recursive: true, force: true });
      fs.renameSync(f + '.keep', f);
    };
  };

  await t.test('shell options', async (t) => {
    // bash takes SHELLOPTS from the job's environment: noglob left every listing a single "*".
    await same(t, 'SHELLOPTS=noglob', { env: { SHELLOPTS: 'noglob' }, answered: true });
    await same(t, 'a .conf with set -f', { extra: 'set -f', answered: true });
    await same(t, 'a .conf with failglob, nocaseglob, nocasematch and IFS', { extra: "shopt -s failglob nocaseglob nocasematch\nIFS=''", answered: true });
  });

  await t.test('files bash cannot read as Node does', async (t) => {
    // Present but unreadable is not absent: gdrgate reads EACCES, never ENOENT.
    await same(t, 'an unreadable local_cpulist', { mut: chmod(`${GPU}/local_cpulist`, 0) });
    await same(t, 'an unreadable information file', { mut: chmod('proc/driver/nvidia/gpus/0000:88:00.0/information', 0) });
    await same(t, 'unreadable limits', { mut: chmod('proc/self/limits', 0) });
    await same(t, 'a directory for numa_node', { mut: swap(`${GPU}/numa_node`, (f) => fs.mkdirSync(f)) });
    // mapfile drops NUL bytes; Node keeps them (and the parsers refuse the text).
    await same(t, 'a NUL in numa_node', { mut: swap(`${GPU}/numa_node`, (f) => fs.writeFileSync(f, '1\0\n')) });
    await same(t, 'a NUL in local_cpulist', { mut: swap(`${GPU}/local_cpulist`, (f) => fs.writeFileSync(f, '0-7\0 8\n')) });
    await same(t, 'local_cpulist without its newline', { mut: swap(`${GPU}/local_cpulist`, (f) => fs.writeFileSync(f, '14-27')) });
  });

  await t.test('SHELLOPTS=noclobber and an earlier step\'s record', async (t) => {
    const id = String(job++);
    t.equal(rig.prolog(id, '0,1'), 0, 'prolog');
    const dir = path.join(rig.stateDir, `job-${id}`);
    const steps = async (agent: boolean): Promise<unknown> => {
      for (const f of fs.readdirSync(dir)) if (f.startsWith('task.')) fs.rmSync(path.join(dir, f), { recursive: true });
      rig.conf(agent);
      await rig.task({ SLURM_JOB_ID: id, SLURM_STEP_ID: '0', SLURM_JOB_GPUS: '0,1', SHELLOPTS: 'noclobber' });
      // A later step with another binding: its findings join the earlier step's in task.json.
      fs.writeFileSync(path.join(rig.tree, 'proc/self/status'), 'Name:\tbash\nCpus_allowed_list:\t14-27\nMems_allowed_list:\t1\n');
      try {
        await rig.task({ SLURM_JOB_ID: id, SLURM_STEP_ID: '1', SLURM_JOB_GPUS: '0,1', SHELLOPTS: 'noclobber' });
      } finally {
        fs.writeFileSync(path.join(rig.tree, 'proc/self/status'), 'Name:\tbash\nCpus_allowed_list:\t0-7\nMems_allowed_list:\t0\n');
      }
      return { ...(JSON.parse(fs.readFileSync(path.join(dir, 'task.json'), 'utf8')) as object), time: 'T' };
    };
    t.same(await steps(true), await steps(false), 'the same task record after two steps');
  });
}
