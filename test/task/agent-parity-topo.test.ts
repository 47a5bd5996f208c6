// A class with ncclTopo: the agent's NCCL_TOPO_FILE decision for a job whose /sys moves or hides a GPU is gdrgate task's, whatever the job's user put in place of the host's topology file in the job's directory (a link, a copy of their own).
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { said, startRig } from './_agent-rig.js';

if (process.getuid?.() !== 0) t.skip('needs root (the agent is root, the TaskProlog runs as the job uid)', () => {});
else await main();

async function main(): Promise<void> {
  const rig = await startRig();
  t.teardown(() => rig.close());
  const bfile = path.join(rig.work, 'baseline.json');
  const b = JSON.parse(fs.readFileSync(bfile, 'utf8')) as { classes: Record<string, unknown>[] };
  b.classes[0]!.ncclTopo = true;
  fs.writeFileSync(bfile, JSON.stringify(b));
  const link = path.join(rig.tree, 'sys/bus/pci/devices/0000:88:00.0');
  const host = fs.readlinkSync(link);
  /** The job's /sys shows GPU 0 elsewhere (a flattened tree), or not at all. */
  const view = (how: 'moved' | 'hidden'): (() => void) => {
    fs.rmSync(link);
    if (how === 'moved') {
      fs.mkdirSync(path.join(rig.tree, 'sys/devices/flat/0000:88:00.0'), { recursive: true });
      fs.symlinkSync('../../../devices/flat/0000:88:00.0', link);
    }
    return () => {
      fs.rmSync(link, { force: true });
      fs.symlinkSync(host, link);
    };
  };
  const topo = (dir: string, how: 'link' | 'copy'): void => {
    const x = path.join(dir, 'nccl-topo.xml');
    fs.renameSync(x, `${x}.host`);
    if (how === 'link') fs.symlinkSync('nccl-topo.xml.host', x);
    else {
      fs.copyFileSync(`${x}.host`, x);
      fs.chownSync(x, fs.statSync(dir).uid, fs.statSync(dir).gid);
    }
  };
  let job = 300;
  await t.test('the NCCL_TOPO_FILE decision', async (t) => {
    for (const [name, how, file] of [
      ['the host view', null, null],
      ['GPU 0 moved', 'moved', null],
      ['GPU 0 hidden', 'hidden', null],
      ['GPU 0 moved, the topology file a link', 'moved', 'link'],
      ['GPU 0 moved, the topology file the user\'s copy', 'moved', 'copy'],
    ] as const) {
      const id = String(job++);
      t.equal(rig.prolog(id, '0,1'), 0, `${name}: prolog`);
      const dir = path.join(rig.stateDir, `job-${id}`);
      t.ok(fs.existsSync(path.join(dir, 'nccl-topo.xml')), `${name}: the Prolog wrote the topology file`);
      const undo = how ? view(how) : () => {};
      try {
        if (file) topo(dir, file);
        const r = await rig.both(id, { SLURM_STEP_ID: '0', SLURM_JOB_GPUS: '0,1' });
        t.same(said(r.viaAgent), said(r.viaNode), `${name}: the same lines and exit code`);
        t.same(r.agentRecord, r.nodeRecord, `${name}: the same task record`);
        if (!file) t.equal(r.agentRuns, 0, `${name}: the agent answered`);
      } finally {
        undo();
      }
    }
  });
}
