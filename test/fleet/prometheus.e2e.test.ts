// End to end with the real monitoring stack (Debian's prometheus and prometheus-node-exporter), on loopback: three
// node_exporters, each serving one node's epilog textfile (written by the real renderer) through its textfile
// collector; one Prometheus scraping them every second; loadPrometheus asks that Prometheus. The slow rail's node
// must come out lower than the others, every node's paths with the figures the renderer wrote.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadPrometheus } from '../../src/fleet/prometheus.js';
import { BYTES_PER_SECOND } from '../../src/epilog/prom.js';
import { REPO } from '../helpers/paths.js';
import { nodeTextfile, RAILS } from './_prom-fleet.js';
import { scratchDir } from '../helpers/scratch.js';

const PROMETHEUS = '/usr/bin/prometheus';
const NODE_EXPORTER = '/usr/bin/prometheus-node-exporter';
const absent = [PROMETHEUS, NODE_EXPORTER].filter((p) => !existsSync(p));
const GB = BYTES_PER_SECOND['Gb/s'];

/**
 * `n` distinct loopback ports nothing listens on now (the kernel's picks; the daemons bind them a moment later). All
 * are held until the last is picked: one closed before the next listen(0) may be handed out again, and two daemons
 * told the same port leave one of them exited and the wait below failing.
 */
async function freePorts(n: number): Promise<number[]> {
  const held = await Promise.all(
    Array.from({ length: n }, async () => {
      const s = createServer();
      await new Promise<void>((res) => s.listen(0, '127.0.0.1', res));
      return s;
    }),
  );
  const ports = held.map((s) => (s.address() as AddressInfo).port);
  await Promise.all(held.map((s) => new Promise<void>((res) => s.close(() => res()))));
  return ports;
}

async function getJson(url: string): Promise<unknown> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return r.ok ? await r.json() : null;
  } catch {
    return null;
  }
}

t.test('three node_exporters, one Prometheus, loadPrometheus', { skip: absent.length ? `missing ${absent.join(', ')} (Debian packages prometheus, prometheus-node-exporter)` : false }, async (t) => {
  t.setTimeout(120_000);
  const work = scratchDir('gdrgate-prom-e2e-');
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  const stopAll = (): void => children.forEach((c) => c.exitCode === null && c.signalCode === null && c.kill('SIGKILL'));
  process.once('exit', stopAll);
  t.teardown(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
    await Promise.race([Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? null : new Promise((r) => c.once('exit', r))))), sleep(5000)]);
    stopAll();
    process.off('exit', stopAll);
    if (t.passing()) rmSync(work, { recursive: true, force: true });
    else t.comment(`kept for inspection: ${work}\n${logs.join('\n').slice(-4000)}`);
  });
  const start = (name: string, file: string, args: string[]): ChildProcess => {
    const c = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: work });
    c.stderr?.on('data', (d: Buffer) => logs.push(`[${name}] ${d.toString().trimEnd()}`.slice(0, 2000)));
    children.push(c);
    return c;
  };

  const fleet = [nodeTextfile('gpu001', false, 21), nodeTextfile('gpu002', true, 22), nodeTextfile('gpu003', false, 23)];
  const targets: string[] = [];
  const [promPort, ...exporterPorts] = await freePorts(fleet.length + 1);
  for (const [i, f] of fleet.entries()) {
    const dir = path.join(work, f.node);
    mkdirSync(dir);
    writeFileSync(path.join(dir, 'gdrgate.prom'), f.text);
    const port = exporterPorts[i]!;
    targets.push(`127.0.0.1:${port}`);
    start(`node_exporter ${f.node}`, NODE_EXPORTER, ['--collector.disable-defaults', '--collector.textfile', `--collector.textfile.directory=${dir}`, `--web.listen-address=127.0.0.1:${port}`]);
  }
  const config = path.join(work, 'prometheus.yml');
  writeFileSync(config, `global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: [${targets.map((x) => `'${x}'`).join(', ')}]\n`);
  start('prometheus', PROMETHEUS, [`--config.file=${config}`, `--storage.tsdb.path=${path.join(work, 'tsdb')}`, `--web.listen-address=127.0.0.1:${promPort}`]);
  const url = `http://127.0.0.1:${promPort}`;

  // Bounded wait: every target up, and every node's count series in the answer.
  const t0 = performance.now();
  let ready = false;
  while (!ready && performance.now() - t0 < 60_000) {
    await sleep(500);
    if (children.some((c) => c.exitCode !== null)) break;
    const up = (await getJson(`${url}/api/v1/query?query=up`)) as { data?: { result?: { value: [number, string] }[] } } | null;
    const n = (await getJson(`${url}/api/v1/query?query=${encodeURIComponent('count(gdrgate_bandwidth_samples{window="all"})')}`)) as { data?: { result?: { value: [number, string] }[] } } | null;
    ready = up?.data?.result?.length === fleet.length && up.data.result.every((r) => r.value[1] === '1') && n?.data?.result?.[0]?.value[1] === String(fleet.length * RAILS.length);
  }
  t.ok(ready, `targets up and series scraped after ${Math.round(performance.now() - t0)} ms`, { logs: logs.slice(-10) });
  if (!ready) return;

  const r = await loadPrometheus(url, { timeoutMs: 10_000 });
  t.same(r.missing, [], 'no node missing');
  t.equal(r.stats.length, fleet.length * RAILS.length, 'every node, every path');
  for (const f of fleet)
    for (const k of f.stats) {
      const s = r.stats.find((x) => x.node === f.node && x.probe === k.key.probe && x.gpu === k.key.gpu && x.nic === k.key.nic && x.recipeHash === k.key.recipeHash);
      t.equal(s?.p50, k.all.p50 * GB, `${f.node} ${k.key.probe} ${k.key.gpu ?? 'host'}: p50 ${k.all.p50} Gb/s as the epilog wrote it`);
      t.equal(s?.min, k.all.min * GB);
      t.equal(s?.count, k.all.count);
      t.equal(s?.source, `prometheus:${url}/`);
    }
  const slowRail = (n: string): number => r.stats.find((s) => s.node === n && s.gpu === RAILS[2].gpu)!.p50;
  t.ok(slowRail('gpu002') < 0.6 * Math.min(slowRail('gpu001'), slowRail('gpu003')), `gpu002's ${RAILS[2].gpu} rail (${(slowRail('gpu002') / GB).toFixed(2)} Gb/s) is lower than the others' (${(slowRail('gpu001') / GB).toFixed(2)}, ${(slowRail('gpu003') / GB).toFixed(2)})`);
  const recent = await loadPrometheus(url, { timeoutMs: 10_000, window: 'recent' });
  t.ok(recent.stats.length === r.stats.length && recent.stats.every((s) => s.count === 5), 'window "recent": the last 5 samples of each path');

  // The judge's command, once it is in this tree (src/fleet/report-command.ts): the same Prometheus through the CLI.
  const report = path.join(REPO, 'dist/fleet/report-command.js');
  if (existsSync(report)) {
    const { spawnSync } = await import('node:child_process');
    const empty = path.join(work, 'snapshots');
    mkdirSync(empty);
    const c = spawnSync(process.execPath, [path.join(REPO, 'dist/cli.js'), 'fleet', 'report', empty, '--prometheus', url], { encoding: 'utf8', timeout: 60_000 });
    const want = [
      `gdrgate fleet report — ${empty}: 3 nodes (0 read, 0 unreadable, 0 missing, 0 judged in part) in 1 class(es); 1 differ (0 critical, 1 major, 0 minor)`,
      '',
      'NODE    WORST       DIFFERS FROM ITS CLASS, OR WHY IT WAS NOT JUDGED',
      'gpu002  MAJOR       bw ib-write-gpu 0000:82:00.0↔mlx5_1 gpu->nic->gpu: 10.5 Gb/s  (class median 22.9 Gb/s, band from 21.3 Gb/s, z -27.1)',
      '                      what to do: rerun the probe on this node; if it stays below the band, check the rail (gdrgate check --only pcie-link,pcie-acs on the node) and its cable',
      '',
      'class fleet: 3 nodes, 0 snapshots read, 3 not: gpu001 (no snapshot), gpu002 (no snapshot), gpu003 (no snapshot); majority as on (no snapshot)',
      '  bandwidth per path (node p50s):',
      '    PROBE          RAIL                 DIRECTION        NODES  MEDIAN     MAD       BAND FROM  BELOW',
      '    ib-write-gpu   0000:41:00.0↔mlx5_0  gpu->nic->gpu    3      23.0 Gb/s  0.1 Gb/s  21.4 Gb/s  -',
      '    ib-write-gpu   0000:82:00.0↔mlx5_1  gpu->nic->gpu    3      22.9 Gb/s  0.1 Gb/s  21.3 Gb/s  gpu002',
      '    ib-write-host  host↔mlx5_0          host->nic->host  3      92.0 Gb/s  0.1 Gb/s  85.5 Gb/s  -',
      '',
      'result: 1 of 3 nodes differ from their class; 0 not fully judged (0 unreadable, 0 missing, 0 judged in part) (exit 1)',
    ];
    t.equal(c.stdout, `${want.join('\n')}\n`, `gdrgate fleet report --prometheus names the slow node (exit ${c.status}): ${c.stderr.slice(0, 500)}`);
  } else t.comment('gdrgate fleet report is not in this tree yet: loadPrometheus asked directly');
  t.ok(readFileSync(path.join(work, 'gpu002', 'gdrgate.prom'), 'utf8').includes('node="gpu002"'));
});
