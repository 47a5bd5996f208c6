// `gdrgate fleet collect` through a real srun on the real 4-node Slurm of test/e2e/cluster (its own cluster, its own
// addresses, started and stopped with the same scripts as cluster.test.ts): every node snapshots its own tree into
// one shared directory, and writes beside it the summary fleet report reads instead; node2's GPU link trained to
// x8; node4's slurmd stopped, so slurmctld has it not responding: it is listed missing, and the step runs on the
// others without waiting for it. The report says which source each node was judged from. Runs when CI is set or
// GDRGATE_E2E=1, as root, with ip, unshare and nsenter; locally under `flock /tmp/gdrgate-cluster.lock`.
import t from 'tap';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expandHostlist } from '../../src/fleet/hostlist-expand.js';
import { trainGpuTo } from '../helpers/h200-link.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { nodeTextfile, RAILS } from '../fleet/_prom-fleet.js';
import { cleanEnv, REPO, run, runOrSkip, secs, snapshotBuild, T0, waitFor, type Ran } from './_sandbox.js';

const CLUSTER = join(REPO, 'test/e2e/cluster');
const NODES = ['node1', 'node2', 'node3', 'node4'] as const;
const TOOLS = ['/usr/sbin/ip', '/usr/bin/unshare', '/usr/bin/nsenter'];
const missingTools = TOOLS.filter((p) => !existsSync(p));
const PROMETHEUS = '/usr/bin/prometheus';
const NODE_EXPORTER = '/usr/bin/prometheus-node-exporter';
const NET = '10.231.40';

interface Summary {
  nodes: number;
  answered: { node: string; file: string; bytes: number; summary: string | null }[];
  missing: { node: string; why: string }[];
  srun: { args: string[]; exitCode: number | null; timedOut: boolean; durationMs: number } | null;
}

await runOrSkip(
  t,
  'cluster fleet',
  async () => {
    if (missingTools.length) t.skip(`cluster fleet e2e skipped: missing ${missingTools.join(', ')} (network/UTS/mount namespaces)`, () => {});
    else await e2e();
  },
  'it must run as root (it makes network namespaces and starts munged, slurmctld and four slurmd)',
  ' — a real 4-node Slurm from test/e2e/cluster; see test/e2e/README.md',
);

async function e2e(): Promise<void> {
  t.setTimeout(240_000);
  const WORK = mkdtempSync('/tmp/gdrgate-cluster-fleet-');
  chmodSync(WORK, 0o755);
  const CLI = snapshotBuild(WORK);
  const DIR = join(WORK, 'c1');
  const OUT = join(WORK, 'fleet');
  mkdirSync(OUT);
  // Each node's tree under its own directory: DIR/node/tree is that node's own copy inside its mount namespace.
  // Each tree names its node, as a real node's /proc/sys/kernel/hostname does (fleet report judges a snapshot as the node it was taken on only).
  for (const n of NODES) {
    cpSync(join(REPO, 'examples/h200-vm'), join(DIR, 'nodes', n, 'tree'), { recursive: true, verbatimSymlinks: true });
    writeFileSync(join(DIR, 'nodes', n, 'tree/etc/hostname'), `${n}\n`);
  }
  trainGpuTo(join(DIR, 'nodes', 'node2', 'tree'), 8);

  let stopped = false;
  const stop = (): Ran | null => (stopped ? null : ((stopped = true), run('/bin/bash', [join(CLUSTER, 'stop.sh'), DIR], { env: cleanEnv({}), timeoutMs: 60_000 })));
  const onExit = (): void => void stop();
  process.once('exit', onExit);
  t.teardown(() => {
    process.off('exit', onExit);
    const r = stop();
    if (r) t.comment(`stop: ${r.ms} ms${r.status !== 0 ? ` (exit ${r.status}: ${r.stderr.trim()})` : ''}`);
    if (t.passing()) rmSync(WORK, { recursive: true, force: true });
    else t.comment(`kept for inspection: ${WORK} (c1/ctl/log, c1/nodes/*/log, fleet/)`);
    t.comment(`cluster fleet e2e: ${secs(T0)} in all`);
  });
  // Not cluster.test.ts's port and /24 (each cluster has its own namespaces anyway); a short SlurmdTimeout so that
  // slurmctld finds the stopped slurmd within seconds, as it would within a minute on a site's default.
  const up = run('/bin/bash', [join(CLUSTER, 'start.sh'), DIR], { env: cleanEnv({ CLUSTER_PORT: '8140', CLUSTER_NET: NET, CLUSTER_EXTRA_CONF: 'SlurmdTimeout=6' }), timeoutMs: 120_000 });
  t.equal(up.status, 0, `start.sh: 4 nodes idle in ${up.ms} ms`, { stderr: up.stderr.slice(-3000) });
  if (up.status !== 0) return;
  const env = cleanEnv({}, true);
  const slurm = (cmd: string, args: readonly string[]): Ran => run(join(DIR, 'bin', cmd), args, { env, timeoutMs: 20_000 });

  // Inside the namespaces: node_exporter on each node's own address serving that node's textfile (written by the
  // real renderer; node2's second GPU rail slow), Prometheus in the controller's namespace scraping them.
  await t.test('Prometheus scrapes every node inside the namespaces; loadPrometheus finds the slow rail', { skip: [PROMETHEUS, NODE_EXPORTER].some((p) => !existsSync(p)) ? 'prometheus or prometheus-node-exporter not installed' : false }, async (t) => {
    const kids: ChildProcess[] = [];
    const logs: string[] = [];
    t.teardown(async () => {
      for (const k of kids) if (k.exitCode === null && k.signalCode === null) k.kill('SIGTERM');
      await sleep(500);
      for (const k of kids) if (k.exitCode === null && k.signalCode === null) k.kill('SIGKILL');
      if (!t.passing()) t.comment(logs.join('\n').slice(-3000));
    });
    const inNs = (ns: string, args: string[]): ChildProcess => {
      const k = spawn(join(DIR, 'bin/in'), [ns, ...args], { env: cleanEnv({}), stdio: ['ignore', 'ignore', 'pipe'] });
      k.stderr?.on('data', (d: Buffer) => logs.push(`[${ns}] ${d.toString().trimEnd().slice(0, 500)}`));
      kids.push(k);
      return k;
    };
    const files = NODES.map((n, i) => nodeTextfile(n, n === 'node2', 31 + i));
    NODES.forEach((n, i) => {
      const dir = join(DIR, 'nodes', n, 'textfile');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'gdrgate.prom'), files[i]!.text);
      inNs(n, [NODE_EXPORTER, '--collector.disable-defaults', '--collector.textfile', `--collector.textfile.directory=${dir}`, `--web.listen-address=${NET}.${11 + i}:9100`]);
    });
    const cfg = join(WORK, 'prometheus.yml');
    writeFileSync(cfg, `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: [${NODES.map((_, i) => `'${NET}.${11 + i}:9100'`).join(', ')}]\n`);
    inNs('ctl', [PROMETHEUS, `--config.file=${cfg}`, `--storage.tsdb.path=${join(WORK, 'tsdb')}`, `--web.listen-address=${NET}.1:9090`]);
    // The loader runs where Prometheus is reachable: in the controller's namespace (nothing of it is on the host's).
    const loader = `import(${JSON.stringify(join(WORK, 'gdrgate/dist/fleet/prometheus.js'))}).then(async (m) => { const r = await m.loadPrometheus(process.argv[1], { timeoutMs: 5000 }); process.stdout.write(JSON.stringify(r)); }).catch((e) => { process.stdout.write(JSON.stringify({ error: String(e) })); })`;
    const ask = (): { stats?: { node: string; gpu: string | null; p50: number }[]; missing?: unknown[]; error?: string } => {
      const r = run(join(DIR, 'bin/in'), ['ctl', process.execPath, '--input-type=module', '-e', loader, `http://${NET}.1:9090`], { env: cleanEnv({}), withoutNodeOptions: true, timeoutMs: 20_000 });
      try {
        return JSON.parse(r.stdout) as ReturnType<typeof ask>;
      } catch {
        return { error: `${r.status}: ${r.stdout.slice(0, 200)} ${r.stderr.slice(0, 300)}` };
      }
    };
    const got = await waitFor(ask, (v) => v.stats?.length === NODES.length * RAILS.length, 60_000, 1000);
    t.ok(got.ok, `every node's paths through Prometheus in ${got.ms} ms (${got.value.stats?.length ?? got.value.error})`);
    const p50 = (n: string): number => got.value.stats?.find((s) => s.node === n && s.gpu === RAILS[2].gpu)?.p50 ?? NaN;
    t.ok(p50('node2') < 0.6 * Math.min(p50('node1'), p50('node3'), p50('node4')), `node2's slow rail: ${(p50('node2') / 125e6).toFixed(2)} Gb/s against ${['node1', 'node3', 'node4'].map((n) => (p50(n) / 125e6).toFixed(2)).join(', ')}`);
    t.same(got.value.missing, []);
    t.equal(run('/usr/sbin/ip', ['-o', 'addr', 'show']).stdout.includes(`${NET}.1/`), false, "Prometheus's address is not on the host");
  });

  /** The built collector, in a child (its report goes to stdout, which here is the TAP stream). */
  const driverFor = (): string => `import(${JSON.stringify(join(WORK, 'gdrgate/dist/fleet/collect-command.js'))}).then(async (m) => { const r = await m.collectCommand(JSON.parse(process.argv[1])); process.exitCode = { ok: 0, unhealthy: 1, usage: 2, internal: 3 }[r]; })`;
  const collect = (o: { nodes: string; timeout: number }): Ran => {
    const opts = { ...o, out: OUT, root: join(DIR, 'node/tree'), commands: false, srun: join(DIR, 'bin/srun'), scontrol: join(DIR, 'bin/scontrol'), gdrgate: [process.execPath, CLI] };
    return run(process.execPath, ['--input-type=module', '-e', driverFor(), JSON.stringify(opts)], { env, timeoutMs: (o.timeout + 30) * 1000, withoutNodeOptions: true });
  };

  await t.test('the hostlist expander agrees with the real scontrol show hostnames', async (t) => {
    for (const list of ['node[1-4]', 'node[1-2,4],gpu[001-003]', 'gpu[8-11],login1', 'rack[1-2]-n[01-02]', 'node1,node[1-2]']) {
      const r = slurm('scontrol', ['show', 'hostnames', list]);
      const mine = expandHostlist(list);
      const theirs = r.stdout.trim().split('\n');
      // scontrol prints a repeated name again; the collector asks each node once.
      t.same(mine.ok && mine.hosts, [...new Set(theirs)], `${list}: ${theirs.join(' ')}`);
    }
  });

  await t.test('fleet collect: one srun step, three snapshots, the stopped node listed, the x8 node found', async (t) => {
    const pid = Number(readFileSync(join(DIR, 'nodes/node4/run/slurmd.pid'), 'utf8').trim());
    process.kill(pid, 'SIGTERM');
    const seen = await waitFor(() => slurm('sinfo', ['-h', '-N', '-n', 'node4', '-o', '%T']).stdout.trim(), (v) => v.endsWith('*') || /down|not_responding/i.test(v), 60_000, 500);
    t.ok(seen.ok, `slurmctld sees node4's slurmd gone: ${seen.value} (${seen.ms} ms)`);
    const c = collect({ nodes: 'node[1-4]', timeout: 60 });
    t.comment(`fleet collect: ${c.ms} ms\n${c.stdout.trim()}`);
    t.equal(c.status, 1, 'exit 1: a node is missing', { stderr: c.stderr.slice(-2000) });
    const s = JSON.parse(readFileSync(join(OUT, 'gdrgate-collect.json'), 'utf8')) as Summary;
    t.same(s.answered.map((a) => a.node), ['node1', 'node2', 'node3'], 'three nodes answered');
    t.same(s.missing.map((m) => m.node), ['node4'], 'node4 missing');
    t.match(s.missing[0]?.why, /^slurmctld: State=\S*(NOT_RESPONDING|DOWN|\*)/, `in slurmctld's words: ${s.missing[0]?.why}`);
    t.equal(s.srun?.exitCode, 0, 'the step ended on its own, exit 0');
    t.ok(s.srun?.args.includes('--nodelist=node[1-3]') && s.srun.args.includes('--ntasks-per-node=1'), `one step on the three others: ${s.srun?.args.slice(0, 4).join(' ')}`);
    t.match(c.stdout, /3 of 4 nodes answered/);
    t.match(c.stdout, /missing node4: slurmctld: State=/);
    for (const n of ['node1', 'node2', 'node3']) t.ok(existsSync(join(OUT, `${n}.tar.gz`)), `${n}.tar.gz arrived`);
    t.notOk(existsSync(join(OUT, 'node4.tar.gz')), 'no node4.tar.gz');
    t.same(s.answered.map((a) => a.summary), ['node1', 'node2', 'node3'].map((n) => join(OUT, `${n}.summary.json`)), 'each node wrote its summary in the step');
    t.match(c.stdout, /3 of 4 nodes answered .*; 3 wrote a summary/);
    const acct = slurm('sacct', ['-n', '-X', '-o', 'JobName,NNodes']).stdout;
    t.comment(`sacct: ${acct.trim() || '(no accounting in this cluster)'}`);

    // The judge, from the summaries the nodes wrote: each node's source said; node2's x8 link found from its summary.
    type Verdict = { node: string; status: string; source: string | null; sourceNote: string | null; differences: { area: string; subject: string }[] };
    const report = (): { nodes: Verdict[]; summary: { fromSummary: number; fromSnapshot: number } } => {
      const r = run(process.execPath, [CLI, 'fleet', 'report', OUT, '--json'], { env, withoutNodeOptions: true, timeoutMs: 60_000 });
      t.equal(r.status, 1, 'fleet report: exit 1 (node2 differs, node4 missing)', { stderr: r.stderr.slice(-2000) });
      return JSON.parse(r.stdout) as ReturnType<typeof report>;
    };
    const byNode = (vs: readonly Verdict[]): Map<string, Verdict> => new Map(vs.map((v) => [v.node, v]));
    const first = byNode(report().nodes);
    t.same(['node1', 'node2', 'node3', 'node4'].map((n) => first.get(n)?.source), ['summary', 'summary', 'summary', null], 'node1-3 judged from their summaries; node4 from nothing');
    t.same(['node1', 'node2', 'node3', 'node4'].map((n) => first.get(n)?.status), ['ok', 'differs', 'ok', 'missing']);
    t.ok(first.get('node2')?.differences.some((d) => d.area === 'link-width' && d.subject === '0000:00:06.0'), "node2: the x8 GPU's link, from its summary");
    // node3's snapshot taken again by hand since: its summary is stale, node3 is judged from its snapshot, and said so.
    const again = run(process.execPath, [CLI, 'snapshot', '--root', join(DIR, 'nodes/node3/tree'), '--no-commands', '--out', join(OUT, 'node3.tar.gz')], { env, withoutNodeOptions: true, timeoutMs: 60_000 });
    t.equal(again.status, 0, 'node3 snapshotted again by hand', { stderr: again.stderr.slice(-1000) });
    const second = byNode(report().nodes);
    t.same(['node1', 'node2', 'node3'].map((n) => second.get(n)?.source), ['summary', 'summary', 'snapshot'], 'node3 now from its snapshot');
    t.match(second.get('node3')?.sourceNote ?? '', /^summary not used: its digest is not that of the snapshot beside it \(the snapshot changed since\); judged from the snapshot$/, "node3: why its summary was not used");
    t.equal(second.get('node3')?.status, 'ok', 'node3 still judged, clean');
    const bad = run(process.execPath, [CLI, 'compare', join(OUT, 'node2.tar.gz'), join(OUT, 'node1.tar.gz')], { env, withoutNodeOptions: true, timeoutMs: 60_000 });
    t.comment(bad.stdout.split('\n').slice(0, 12).join('\n'));
    t.match(bad.stdout, /0000:00:06\.0/, "compare node2 node1: the x8 GPU's link differs");
    t.not(bad.status, 0, `compare exits non-zero on the x8 node (${bad.status})`);
    const same = run(process.execPath, [CLI, 'compare', join(OUT, 'node3.tar.gz'), join(OUT, 'node1.tar.gz')], { env, withoutNodeOptions: true, timeoutMs: 60_000 });
    t.equal(same.status, 0, 'compare node3 node1: equivalent', { stdout: same.stdout.slice(0, 1500) });
    writeFileSync(join(WORK, 'collect-stdout.txt'), c.stdout);
  });

  await t.test("a slurmd that just died (slurmctld still has it idle): the collection ends at its bound, the node listed", async (t) => {
    const pid = Number(readFileSync(join(DIR, 'nodes/node3/run/slurmd.pid'), 'utf8').trim());
    process.kill(pid, 'SIGKILL');
    const c = collect({ nodes: 'node[1-3]', timeout: 10 });
    t.comment(`fleet collect: ${c.ms} ms\n${c.stdout.trim()}\n${c.stderr.trim().split('\n').slice(-6).join('\n')}`);
    t.ok(c.status === 1 || c.status === 3, `ended by itself, exit ${c.status} (1: some answered, 3: none)`);
    const s = JSON.parse(readFileSync(join(OUT, 'gdrgate-collect.json'), 'utf8')) as Summary;
    t.same([...s.answered.map((a) => a.node), ...s.missing.map((m) => m.node)].sort(), ['node1', 'node2', 'node3'], 'every node accounted for, answered or missing');
    t.ok(s.missing.some((m) => m.node === 'node3'), `node3 missing: ${s.missing.find((m) => m.node === 'node3')?.why}`);
    // slurmctld marks node3 within SlurmdTimeout (6 s here) plus a ping: by the end of the 10 s bound, usually.
    t.comment(`node3's reason names slurmctld's new state: ${/slurmctld now: State=/.test(s.missing.find((m) => m.node === 'node3')?.why ?? '')}`);
  });
}
