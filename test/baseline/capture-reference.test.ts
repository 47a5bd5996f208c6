// `baseline capture` records the reference node as it is: its memlock minimum is slurmd's (what jobs inherit), never
// the capturing shell's; and what the reference itself fails or warns of without a baseline is said, one line per
// check and code, since every later node with the same fault would pass against the class. On the HGX H100 model.
import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { allDevices, buildTree, limitsText, type GenNode } from '../gen/sysfs-tree.js';
import { node as HGX } from '../gen/topologies/sglang30401-hgx-h100.js';
import { cli } from '../helpers/cli.js';
import { H200 } from '../helpers/paths.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

const NOTE = 'gdrgate: note: ';
/** A Prolog's slurmd (pid 4242, root's, found through /run/slurmd.pid) with its memlock; the tree's own process at `selfKiB`. */
async function node(root: string, selfKiB: number | 'unlimited', slurmdKiB: number | 'unlimited', change?: (n: GenNode) => void): Promise<void> {
  const n: GenNode = { ...structuredClone(HGX), memlockKiB: selfKiB };
  change?.(n);
  await buildTree(root, n);
  const status = (name: string, pid: number): string =>
    readFileSync(path.join(H200, 'proc/self/status'), 'utf8').replace(/^Name:.*$/m, `Name:\t${name}`).replace(/^Pid:.*$/m, `Pid:\t${pid}`).replace(/^PPid:.*$/m, 'PPid:\t1').replace(/^Uid:.*$/m, 'Uid:\t0\t0\t0\t0');
  const put = (p: string, s: string): void => {
    mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    writeFileSync(path.join(root, p), s);
  };
  put('proc/self/status', status('node', 5151));
  put('run/slurmd.pid', '4242\n');
  put('proc/4242/comm', 'slurmd\n');
  put('proc/4242/status', status('slurmd', 4242));
  put('proc/4242/limits', limitsText(slurmdKiB));
}

const memlockLines = (out: string): string[] => out.split('\n').filter((l) => l.includes('memlock-limit') && !l.startsWith('PASS'));

t.test("the memlock minimum is slurmd's, never the capturing shell's: a node whose slurmd is at 8 MiB still fails", async (t) => {
  const dir = await scratchDirAsync('gdrgate-capref-', TREE_TMP);
  await node(path.join(dir, 'ref'), 8192, 'unlimited');
  await node(path.join(dir, 'bad'), 'unlimited', 8192);
  const cap = cli(['baseline', 'capture', '--root', path.join(dir, 'ref'), '--class', 'hgx', '--match', 'gpu[001-064]']);
  t.equal(cap.code, 0);
  t.equal(JSON.parse(cap.stdout).classes[0].memlockMin, 'unlimited', 'before: 8388608, the shell\'s 8 MiB');
  t.same(cap.stderr.split('\n').filter((l) => l.startsWith(NOTE)), [], 'a clean reference: nothing said (its own shell\'s memlock is not the node\'s)');
  writeFileSync(path.join(dir, 'b.json'), cap.stdout);
  const r = cli(['check', '--root', path.join(dir, 'bad'), '--baseline', path.join(dir, 'b.json'), '--node', 'gpu002']);
  t.equal(r.code, 1, 'before: healthy (exit 0)');
  t.same(memlockLines(r.stdout), ['FAIL    memlock-limit          slurmd[4242]         memlock 8 MiB (want >= unlimited)']);
  // A site whose slurmd runs with a finite limit on purpose: recorded, and said.
  await node(path.join(dir, 'finite'), 'unlimited', 64 * 1024 * 1024);
  const fin = cli(['baseline', 'capture', '--root', path.join(dir, 'finite'), '--class', 'hgx']);
  t.equal(JSON.parse(fin.stdout).classes[0].memlockMin, 68719476736);
  t.same(fin.stderr.split('\n').filter((l) => l.startsWith(NOTE)), [
    `${NOTE}memlock minimum recorded as slurmd's soft limit, 68719476736 bytes, below unlimited (what RDMA registration of GPU memory is given without a baseline): is it really known-good?`,
    `${NOTE}the reference node itself fails memlock-limit memlock-low on slurmd[4242]: memlock 64 GiB`,
    `${NOTE}the class records this node as it is: a node with that fault may pass against it; capture from a node that is clean under \`gdrgate check\` (no baseline), or edit the class`,
  ]);
});

t.test('a degraded reference (translated IOMMU, Relaxed Ordering off beside a GPU): each fault said before the class goes out', async (t) => {
  const dir = await scratchDirAsync('gdrgate-capref-', TREE_TMP);
  await node(path.join(dir, 'bad'), 'unlimited', 'unlimited', (n) => {
    n.iommu = { units: ['dmar0', 'dmar1'], groupType: 'DMA-FQ' };
    allDevices(n).filter((d) => d.kind === 'nic')[0]!.relaxedOrdering = false;
  });
  const cap = cli(['baseline', 'capture', '--root', path.join(dir, 'bad'), '--class', 'hgx']);
  t.equal(cap.code, 0, 'written: a site may mean it');
  t.same(cap.stderr.split('\n').filter((l) => l.startsWith(NOTE)), [
    `${NOTE}the reference node itself warns pcie-relaxed-ordering ro-off on 0000:19:00.0: mlx5_0: DevCtl RlxdOrd- with GPU 0000:18:00.0 under the same switch`,
    `${NOTE}the reference node itself warns iommu-mode iommu-translated on 0000:18:00.0: IOMMU translated (group 20: DMA-FQ) (and 15 more: 0000:19:00.0, 0000:2a:00.0, 0000:2b:00.0, …)`,
    `${NOTE}the class records this node as it is: a node with those faults may pass against it; capture from a node that is clean under \`gdrgate check\` (no baseline), or edit the class`,
  ], 'before: nothing said');
});
