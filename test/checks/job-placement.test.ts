// job-placement (node side): gres.conf Cores= of each GPU against its local CPUs, on the generated two-socket tree
// (GPU 0000:18:00.0 on node 0, CPUs 0-47,96-143; GPU 0000:9a:00.0 on node 1) with the core topology a Sapphire
// Rapids pair gives (SMT siblings n and n+96), so Slurm's core ids 0-47 are socket 0's and 48-95 socket 1's.
import { informationText } from '../gen/nvidia-procfs.js';
import { GPUS, node as TWO } from '../gen/topologies/two-socket-2gpu-2nic.js';
import t from 'tap';
import { inventoryOf, patches, put, remove, runCheck, table, type Patch, type Want } from './_trees.js';

const [G0, G1] = GPUS;
const L0 = '0-47,96-143';
const L1 = '48-95,144-191';

/** The kernel's topology files for 2 × 48 cores × 2 threads. */
const topology: Patch = async (root) => {
  for (let c = 0; c < 192; c++) {
    const core = c % 96;
    await put(`sys/devices/system/cpu/cpu${c}/topology/core_cpus_list`, `${core},${core + 96}\n`)(root);
    await put(`sys/devices/system/cpu/cpu${c}/topology/physical_package_id`, `${core < 48 ? 0 : 1}\n`)(root);
  }
};
/** The NVIDIA module's minors: `[minor of 0000:18:00.0, minor of 0000:9a:00.0]`. */
const minors = (m: readonly [number, number]): Patch => patches(put(`proc/driver/nvidia/gpus/${G0}/information`, informationText(G0, m[0])), put(`proc/driver/nvidia/gpus/${G1}/information`, informationText(G1, m[1])));
const gres = (text: string, m: readonly [number, number] = [0, 1]): Patch => patches(put('etc/slurm/gres.conf', text), minors(m), topology);
/** A topology directory per CPU with its package id only: no core_cpus_list, no thread_siblings_list. */
const packagesOnly: Patch = async (root) => {
  for (let c = 0; c < 192; c++) await put(`sys/devices/system/cpu/cpu${c}/topology/physical_package_id`, `${c % 96 < 48 ? 0 : 1}\n`)(root);
};

const GOOD = 'AutoDetect=off\nName=gpu File=/dev/nvidia0 Cores=0-47\nName=gpu File=/dev/nvidia1 Cores=48-95 Links=-1,4\n';
const ok = (s: string, local: string, cores: string, cpus: string): Want => ({ status: 'pass', code: 'gres-cores-ok', subject: s, expected: local, actual: `Cores=${cores} (CPUs ${cpus})` });
const far = (s: string, local: string, cores: string, cpus: string): Want => ({ status: 'fail', code: 'gres-cores-far', subject: s, expected: local, actual: `Cores=${cores} (CPUs ${cpus})` });
const both = <T>(w: T): { bare: T; based: T } => ({ bare: w, based: w });
const na: Want = { status: 'skip', code: 'gres-na', subject: 'node' };

export const cases = table('job-placement', [
  { name: 'valid: each GPU gets its own socket\'s cores (Slurm ids 0-47 | 48-95)', from: TWO, patch: gres(GOOD), subjects: [G0, G1], ...both([ok(G0, L0, '0-47', L0), ok(G1, L1, '48-95', L1)]) },
  {
    name: 'invalid: the two lines swapped: every GPU bound to the far socket',
    from: TWO,
    patch: gres('Name=gpu File=/dev/nvidia0 Cores=48-95\nName=gpu File=/dev/nvidia1 Cores=0-47\n'),
    ...both([far(G0, L0, '48-95', L1), far(G1, L1, '0-47', L0)]),
  },
  {
    name: 'invalid: Cores= written for PCI order, but the module numbered the socket-1 GPU first (minor 0)',
    from: TWO,
    patch: gres(GOOD, [1, 0]),
    ...both([far(G1, L1, '0-47', L0), far(G0, L0, '48-95', L1)]),
  },
  { name: 'invalid: Cores= as OS CPU numbers of socket 0 (0-47,96-143 is not a core id list)', from: TWO, patch: gres('Name=gpu File=/dev/nvidia0 Cores=0-47,96-143\n'), ...both([{ status: 'fail', code: 'gres-cores-far', subject: G0, expected: 'cores of this node', actual: 'Cores=0-47,96-143' }]) },
  { name: 'invalid: one core of the other socket in the list', from: TWO, patch: gres('Name=gpu File=/dev/nvidia0 Cores=0-48\n'), ...both([far(G0, L0, '0-48', '0-48,96-144')]) },
  { name: 'warn: GPU lines without Cores= and no AutoDetect', from: TWO, patch: gres('Name=gpu File=/dev/nvidia[0-1]\n'), ...both([{ status: 'warn', code: 'gres-cores-none', subject: G0 }, { status: 'warn', code: 'gres-cores-none', subject: G1 }]) },
  { name: 'valid: AutoDetect=nvml and no Cores= (Slurm asks NVML)', from: TWO, patch: gres('AutoDetect=nvml\nName=gpu File=/dev/nvidia[0-1]\n'), subjects: [G0, G1], ...both([{ status: 'pass', code: 'gres-cores-ok', subject: G0 }, { status: 'pass', code: 'gres-cores-ok', subject: G1 }]) },
  { name: 'valid: AutoDetect=full and no Cores= (full takes NVML\'s CPU affinity too)', from: TWO, patch: gres('AutoDetect=full\nName=gpu File=/dev/nvidia[0-1]\n'), subjects: [G0, G1], ...both([{ status: 'pass', code: 'gres-cores-ok', subject: G0 }, { status: 'pass', code: 'gres-cores-ok', subject: G1 }]) },
  { name: 'warn: AutoDetect=nvml then AutoDetect=off, no Cores=: the last global AutoDetect holds', from: TWO, patch: gres('AutoDetect=nvml\nAutoDetect=off\nName=gpu File=/dev/nvidia0\n'), ...both([{ status: 'warn', code: 'gres-cores-none', subject: G0 }]) },
  { name: 'warn: two AutoDetect= of this node\'s own (nvml, off) beside a global nvml: which holds is not told, so nothing binds', from: TWO, patch: gres('NodeName=gpu001 AutoDetect=nvml\nNodeName=gpu001 AutoDetect=off\nAutoDetect=nvml\nName=gpu File=/dev/nvidia0\n'), ...both([{ status: 'warn', code: 'gres-cores-none', subject: G0 }]) },
  { name: 'valid: Name=GPU (slurmd matches the plugin name in any case) is a GPU line, judged', from: TWO, patch: gres('Name=GPU File=/dev/nvidia0 Cores=0-47\n'), subjects: [G0], ...both([ok(G0, L0, '0-47', L0)]) },
  { name: 'valid: NodeName=gpu[001-004] names this node (gpu001)', from: TWO, patch: gres('NodeName=gpu[001-004] Name=gpu File=/dev/nvidia0 Cores=0-47\n'), subjects: [G0], ...both([ok(G0, L0, '0-47', L0)]) },
  { name: 'valid: NodeName=dgx[1-4],gpu[001-002] (a Slurm hostlist with a comma) names this node (gpu001)', from: TWO, patch: gres('NodeName=dgx[1-4],gpu[001-002] Name=gpu File=/dev/nvidia0 Cores=0-47\n'), subjects: [G0], ...both([ok(G0, L0, '0-47', L0)]) },
  { name: 'skip: NodeName=gpu[1-4] does not name gpu001 (each range as wide as its low bound, as Slurm)', from: TWO, patch: gres('NodeName=gpu[1-4] Name=gpu File=/dev/nvidia0 Cores=0-47\n'), ...both([na]) },
  { name: 'skip: only lines for other nodes', from: TWO, patch: gres('NodeName=dgx[1-4] Name=gpu File=/dev/nvidia0 Cores=48-95\n'), ...both([na]) },
  { name: 'skip: a NodeName= hostlist Slurm refuses (gpu[5-1], a range upside down) names no node, never every node', from: TWO, patch: gres('NodeName=gpu[5-1] Name=gpu File=/dev/nvidia0 Cores=48-95\n'), ...both([na]) },
  {
    name: 'skip: no host name readable (no /proc/sys/kernel/hostname, no /etc/hostname) and no Slurm name: a NodeName= line names no node',
    from: TWO,
    patch: patches(gres('NodeName=gpu001 Name=gpu File=/dev/nvidia0 Cores=48-95\n'), remove('proc/sys/kernel/hostname'), remove('etc/hostname')),
    ...both([na]),
  },
  {
    name: 'valid: a non-gpu gres line (Name=mps) with far Cores= is not a GPU binding: only the gpu lines are judged',
    from: TWO,
    patch: gres(`${GOOD}Name=mps Count=100 File=/dev/nvidia0 Cores=48-95\n`),
    subjects: [G0, G1],
    ...both([ok(G0, L0, '0-47', L0), ok(G1, L1, '48-95', L1)]),
  },
  { name: 'valid: Cores=47, socket 0\'s last core: CPUs 47 and 143 end its local ranges', from: TWO, patch: gres('Name=gpu File=/dev/nvidia0 Cores=47\n'), subjects: [G0], ...both([ok(G0, L0, '47', '47,143')]) },
  { name: 'warn: AutoDetect=off and no Cores=: off asks nothing of NVML, the GPU has nothing to bind by', from: TWO, patch: gres('AutoDetect=off\nName=gpu File=/dev/nvidia0\n'), ...both([{ status: 'warn', code: 'gres-cores-none', subject: G0 }]) },
  { name: 'skip: no gres.conf at all (default trees)', from: TWO, ...both([na]) },
  { name: 'skip: gres.conf that does not parse: never "no GPU line"', from: TWO, patch: gres('Name=gpu File=/dev/nvidia0 Cores=zero\n'), ...both([{ status: 'skip', code: 'gres-unknown', subject: '/etc/slurm/gres.conf' }]) },
  { name: 'skip: a File= no GPU has (minor 7)', from: TWO, patch: gres('Name=gpu File=/dev/nvidia7 Cores=0-47\n'), ...both([{ status: 'skip', code: 'gres-unknown', subject: '/dev/nvidia7' }]) },
  { name: 'skip: no /proc/driver/nvidia/gpus (module not loaded): minors unknown', from: TWO, patch: patches(gres(GOOD), remove('proc/driver/nvidia/gpus')), ...both([{ status: 'skip', code: 'gres-unknown', subject: '/dev/nvidia0' }, { status: 'skip', code: 'gres-unknown', subject: '/dev/nvidia1' }]) },
  { name: 'skip: no core topology in sysfs', from: TWO, patch: patches(gres(GOOD), remove('sys/devices/system/cpu')), ...both([{ status: 'skip', code: 'gres-unknown', subject: G0 }, { status: 'skip', code: 'gres-unknown', subject: G1 }]) },
  {
    name: 'skip: two information files claim device minor 0: which GPU /dev/nvidia0 is cannot be told, never a far binding',
    from: TWO,
    patch: gres(GOOD, [0, 0]),
    ...both([{ status: 'skip', code: 'gres-unknown', subject: '/dev/nvidia0' }, { status: 'skip', code: 'gres-unknown', subject: '/dev/nvidia1' }]),
  },
  {
    name: 'skip: a CPU topology without core_cpus_list or thread_siblings_list: the cores are unknown, never "0 cores"',
    from: TWO,
    patch: patches(put('etc/slurm/gres.conf', GOOD), minors([0, 1]), packagesOnly),
    ...both([{ status: 'skip', code: 'gres-unknown', subject: G0 }, { status: 'skip', code: 'gres-unknown', subject: G1 }]),
  },
  {
    name: 'skip: a CPU directory with no cpuN entry (online only, as a hand-made capture): the cores are unknown, never "0 cores"',
    from: TWO,
    patch: patches(put('etc/slurm/gres.conf', GOOD), minors([0, 1]), remove('sys/devices/system/cpu'), put('sys/devices/system/cpu/online', '0-191\n')),
    ...both([{ status: 'skip', code: 'gres-unknown', subject: G0 }, { status: 'skip', code: 'gres-unknown', subject: G1 }]),
  },
  {
    name: 'skip: a gres.conf over 256 KiB is not parsed (sizes capped before work), never judged from a cut read',
    from: TWO,
    patch: gres(`AutoDetect=off\n${'Name=gpu File=/dev/nvidia0 Cores=0-47\n'.repeat(7000)}`),
    ...both([{ status: 'skip', code: 'gres-unknown', subject: '/etc/slurm/gres.conf' }]),
  },
  // gres.conf's Include lines, followed as slurmd follows them (parse_config.c _parse_include_directive): a relative
  // name from gres.conf's own directory (slurm.conf's, where slurmd reads gres.conf), in the place the line stands.
  {
    name: 'valid: the GPU lines in a file gres.conf includes (Include gres.d/gpus.conf), judged as written there',
    from: TWO,
    patch: patches(gres('AutoDetect=off\nInclude gres.d/gpus.conf\n'), put('etc/slurm/gres.d/gpus.conf', GOOD.slice('AutoDetect=off\n'.length))),
    subjects: [G0, G1],
    ...both([ok(G0, L0, '0-47', L0), ok(G1, L1, '48-95', L1)]),
  },
  {
    name: 'invalid: a far Cores= in an included file: the finding names that file and its line',
    from: TWO,
    patch: patches(gres('Include /etc/slurm/gres.d/gpus.conf\n'), put('etc/slurm/gres.d/gpus.conf', '# socket 1\nName=gpu File=/dev/nvidia0 Cores=48-95\n')),
    ...both([far(G0, L0, '48-95', L1)]),
  },
  {
    name: 'skip: an Include of a file that is not there (slurmd would not start), never the lines around it alone',
    from: TWO,
    patch: gres('Name=gpu File=/dev/nvidia0 Cores=0-47\nInclude gres.d/missing.conf\n'),
    ...both([{ status: 'skip', code: 'gres-unknown', subject: '/etc/slurm/gres.conf' }]),
  },
  {
    name: 'skip: an Include with a glob (Slurm expands none: it skips the line or refuses the file)',
    from: TWO,
    patch: patches(gres('Include gres.d/*.conf\n'), put('etc/slurm/gres.d/a.conf', 'Name=gpu File=/dev/nvidia0 Cores=0-47\n')),
    ...both([{ status: 'skip', code: 'gres-unknown', subject: '/etc/slurm/gres.conf' }]),
  },
  {
    name: 'skip: a gres.conf that includes itself: bounded, a skip, never a hang',
    from: TWO,
    patch: gres('Name=gpu File=/dev/nvidia0 Cores=0-47\nInclude gres.conf\n'),
    ...both([{ status: 'skip', code: 'gres-unknown', subject: '/etc/slurm/gres.conf' }]),
  },
  {
    name: 'skip: a line Slurm refuses in an included file: not usable, said with that file',
    from: TWO,
    patch: patches(gres('Include gres.d/gpus.conf\n'), put('etc/slurm/gres.d/gpus.conf', 'Name=gpu File=/dev/nvidia0 Cores=zero\n')),
    ...both([{ status: 'skip', code: 'gres-unknown', subject: '/etc/slurm/gres.conf' }]),
  },
  {
    name: 'valid: offline CPUs (no topology directory) are not cores, the online ones still judged',
    from: TWO,
    patch: patches(gres(GOOD), remove('sys/devices/system/cpu/cpu191/topology'), remove('sys/devices/system/cpu/cpu190/topology')),
    subjects: [G0, G1],
    ...both([ok(G0, L0, '0-47', L0), ok(G1, L1, '48-95', L1)]),
  },
]);

// gres.conf's NodeName= names Slurm's nodes: slurmd keeps the lines naming its NodeName, which a site may set apart
// from the host name (NodeName=gpu-a NodeHostname=host…). The tree's host name is gpu001 (test/gen/sysfs-tree.ts).
t.test("NodeName= is matched against Slurm's name for the node when the run knows it, else the host name", async (t) => {
  const inv = await inventoryOf(TWO, gres('NodeName=gpu-a Name=gpu File=/dev/nvidia0 Cores=48-95\nNodeName=gpu001 Name=gpu File=/dev/nvidia0 Cores=0-47\n'));
  const seen = (node?: string): string[] => runCheck('job-placement', inv, null, node === undefined ? {} : { node }).map((f) => `${f.status} ${f.code} ${f.subject} ${f.actual ?? ''}`);
  t.same(seen('gpu-a'), [`fail gres-cores-far ${G0} Cores=48-95 (CPUs ${L1})`], "Slurm's gpu-a: its own line, not the host's");
  t.same(seen(), [`pass gres-cores-ok ${G0} Cores=0-47 (CPUs ${L0})`], 'by hand (no Slurm name): the host name gpu001');
  t.same(seen('gpu-b'), ['skip gres-na node '], 'another Slurm node: no line, though the host name matches one');
});
