// The small parsers (sysfs attributes, /proc limits, modules, cmdline, the NVIDIA version, scontrol show node) on real captures.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { cpusCovered, cpusWithin, mergeCpus, parseCpuList, parseLinkSpeed, parseLinkWidth, parseNumaNode, parsePciClass, parsePciId } from '../../src/parsers/sysfs.js';
import { formatBytes, parseLimits, parseMemlock, parseSize } from '../../src/parsers/limits.js';
import { kernelMajorMinor, parseIommuCmdline, parseKernelRelease, parseModules, parseModuleStates, parseNvidiaVersion } from '../../src/parsers/procfs.js';
import { isDrainedOrDown, parseShowNode } from '../../src/parsers/scontrol.js';
import { fixture, H200 } from '../helpers/paths.js';

const gpu = path.join(H200, 'sys/devices/pci0000:00/0000:00:06.0');
const read = (p: string) => readFileSync(p, 'utf8');

t.test('sysfs attributes of the real H200', async (t) => {
  t.same(parseLinkSpeed(read(`${gpu}/current_link_speed`)), { ok: true, value: 32 });
  t.same(parseLinkWidth(read(`${gpu}/max_link_width`)), { ok: true, value: 16 });
  t.same(parsePciId(read(`${gpu}/vendor`)), { ok: true, value: 0x10de });
  t.same(parsePciId(read(`${gpu}/device`)), { ok: true, value: 0x2335 });
  t.same(parsePciClass(read(`${gpu}/class`)), { ok: true, value: 0x030200 });
  t.same(parseNumaNode(read(`${gpu}/numa_node`)), { ok: true, value: null }, '-1 means no affinity');
  t.same(parseCpuList(read(`${gpu}/local_cpulist`)), { ok: true, value: [[0, 15]] });
});

t.test('sysfs edge cases: Unknown, no link, junk is an error never a number', async (t) => {
  t.same(parseLinkSpeed('Unknown\n'), { ok: true, value: null });
  t.same(parseLinkSpeed('2.5 GT/s PCIe\n'), { ok: true, value: 2.5 });
  t.same(parseLinkSpeed('8.0 GT/s\n'), { ok: true, value: 8 }, 'kernels before 5.x print no PCIe suffix');
  t.equal(parseLinkSpeed('fast').ok, false);
  t.same(parseLinkWidth('0\n'), { ok: true, value: null });
  t.same(parseLinkWidth('255\n'), { ok: true, value: null });
  t.equal(parseLinkWidth('x16').ok, false);
  // An all-ones Link Status decodes to 63 (a device that no longer answers): no width, never x63.
  t.same(parseLinkWidth('63\n'), { ok: false, error: 'link width 63 is none a link can have (1, 2, 4, 8, 12, 16, 32): the field of an all-ones read, a device that does not answer' });
  t.same(parseLinkWidth('3\n'), { ok: false, error: 'link width 3 is none a link can have (1, 2, 4, 8, 12, 16, 32)' });
  for (const w of [1, 2, 4, 8, 12, 16, 32]) t.same(parseLinkWidth(`${w}\n`), { ok: true, value: w });
  t.equal(parseLinkWidth('').ok, false);
  t.equal(parsePciId('10de').ok, false);
  // The kernel prints "0x%04x" and "0x%06x" (pci-sysfs.c): a shorter or longer value is a cut or foreign read.
  t.same(parsePciId('0x10').ok, false, 'a cut vendor ID is no ID');
  t.same(parsePciId('0x10de0').ok, false);
  t.same(parsePciClass('0x03').ok, false, 'a cut class code is no class');
  t.same(parsePciClass('0x0302').ok, false, 'four digits are an ID, not a class code');
  t.same(parsePciClass('0x030200\n'), { ok: true, value: 0x030200 });
  t.equal(parseNumaNode('zero').ok, false);
  t.same(parseCpuList('0-3,8,10-11'), { ok: true, value: [[0, 3], [8, 8], [10, 11]] });
  t.equal(parseCpuList('3-1').ok, false);
  t.equal(parseCpuList('a-b').ok, false);
});

t.test('/proc/<pid>/limits of the real capture', async (t) => {
  for (const f of ['proc/self/limits', 'proc/1/limits']) {
    const m = parseMemlock(read(path.join(H200, f)));
    t.same(m, { ok: true, value: { soft: 'unlimited', hard: 'unlimited' } }, f);
  }
  const all = parseLimits(read(path.join(H200, 'proc/self/limits')));
  t.same(all.ok && all.value.get('Max open files'), { soft: 20000, hard: 20000 }, 'Max open files');
  t.equal(all.ok && all.value.size, 16, 'every row');
});

t.test('limits: 64 KiB memlock, odd spacing, not a limits file', async (t) => {
  const real = read(path.join(H200, 'proc/self/limits'));
  const low = real.replace(/^Max locked memory.*$/m, 'Max locked memory         65536                65536                bytes     ');
  t.same(parseMemlock(low), { ok: true, value: { soft: 65536, hard: 65536 } });
  const odd = real.replace(/^Max locked memory.*$/m, 'Max locked memory 8388608 unlimited bytes');
  t.same(parseMemlock(odd), { ok: true, value: { soft: 8388608, hard: 'unlimited' } });
  t.same(parseMemlock(''), { ok: false, error: 'not a limits file: header "Limit ... Soft Limit" missing' });
  t.same(parseMemlock(real.replace(/^Max locked memory.*\n/m, '')), { ok: false, error: '"Max locked memory" row missing' }, 'row missing is an error');
  // The capture's rows without the header line above them: not taken for a limits file.
  t.same(parseMemlock(real.replace(/^Limit .*\n/, '')), { ok: false, error: 'not a limits file: header "Limit ... Soft Limit" missing' });
  t.same(parseLimits(real.split('\n')[0]!), { ok: false, error: 'no limit rows found' }, 'the header alone');
  t.equal(formatBytes(65536), '64 KiB');
  t.equal(formatBytes(8388608), '8 MiB');
  t.equal(formatBytes('unlimited'), 'unlimited');
  t.same(parseSize('64K'), { ok: true, value: 65536 });
  t.same(parseSize('8MiB'), { ok: true, value: 8388608 });
  t.same(parseSize('unlimited'), { ok: true, value: 'unlimited' });
  t.equal(parseSize('lots').ok, false);
  t.equal(formatBytes(1536), '1536 B', 'not a whole KiB: bytes, never rounded');
  t.equal(formatBytes(3 * 1024 ** 3), '3 GiB');
  t.equal(formatBytes(2 * 1024 ** 4), '2 TiB');
  t.same(parseSize('infinity'), { ok: true, value: 'unlimited' }, "systemd's LimitMEMLOCK=infinity");
  t.same(parseSize('2G'), { ok: true, value: 2 * 1024 ** 3 });
  t.same(parseSize('1TiB'), { ok: true, value: 1024 ** 4 });
  t.same(parseSize('64k'), { ok: true, value: 65536 }, 'lower case unit');
  t.same(parseSize('65536'), { ok: true, value: 65536 }, 'bytes');
});

t.test('procfs: modules, kernel release, cmdline of the real capture', async (t) => {
  const mods = parseModules(read(path.join(H200, 'proc/modules')));
  t.same([...mods].sort(), ['nvidia', 'nvidia_uvm']);
  // The capture's kernel has no CONFIG_MODULE_UNLOAD (" - -" for refcount and users): the state is still the fifth field.
  t.same([...parseModuleStates(read(path.join(H200, 'proc/modules')))], [['nvidia_uvm', 'Live'], ['nvidia', 'Live']]);
  t.same([...parseModuleStates('nvidia_peermem 16384 0 - Unloading 0xffffffffc0a00000 (OE)\nib_uverbs 184320 2 rdma_ucm, Loading 0xffffffffc0b00000\n')], [['nvidia_peermem', 'Unloading'], ['ib_uverbs', 'Loading']]);
  t.same(parseKernelRelease(read(path.join(H200, 'proc/version'))), { ok: true, value: '6.18.44-fc-v657-gpu' });
  t.same(kernelMajorMinor('6.18.44-fc-v657-gpu'), [6, 18]);
  t.same(parseIommuCmdline(read(path.join(H200, 'proc/cmdline'))), {}, 'the VM has no iommu= parameters');
  t.same(parseIommuCmdline('BOOT_IMAGE=/vmlinuz ro intel_iommu=on iommu=pt quiet'), { intel_iommu: 'on', iommu: 'pt' });
  // As the kernel reads it (lib/cmdline.c next_arg): quotes dropped, the last of a repeated key, nothing after `--`.
  t.same(parseIommuCmdline('ro "intel_iommu=on" iommu=nopt iommu=pt -- iommu=off'), { intel_iommu: 'on', iommu: 'pt' });
  t.same(parseIommuCmdline('ro "iommu=pt quiet" amd_iommu=on'), { iommu: 'pt quiet', amd_iommu: 'on' });
  // A name's `-` is its `_` to the kernel (parameq, parameqn); the last of either spelling wins; values are as given.
  t.same(parseIommuCmdline('ro intel-iommu=on amd-iommu=off iommu=pt intel_iommu=sm-on'), { intel_iommu: 'sm-on', amd_iommu: 'off', iommu: 'pt' });
  t.same(parseIommuCmdline('iommu.passthrough=1 iommu.strict=0'), { 'iommu.passthrough': '1', 'iommu.strict': '0' });
});

t.test('/proc/driver/nvidia/version: open vs proprietary on real lines', async (t) => {
  const cases: [string, string, 'open' | 'proprietary', string][] = [
    ['bundled capture', path.join(H200, 'proc/driver/nvidia/version'), 'open', '580.159.04'],
    ['proprietary 384', fixture('nvidia-version/proprietary_384.98_ubuntu.txt'), 'proprietary', '384.98'],
    ['open 525', fixture('nvidia-version/open_525.60.11_arch.txt'), 'open', '525.60.11'],
    ['open 565', fixture('nvidia-version/open_565.57.01_ubuntu2404.txt'), 'open', '565.57.01'],
    ['jetson', fixture('nvidia-version/open_jetson_35.3.1_aarch64.txt'), 'open', '35.3.1'],
    ['590 "Open Kernel x86_64 Kernel Module"', fixture('nvidia-version/open_590.48.01_line_only_no_prefix.txt'), 'open', '590.48.01'],
  ];
  for (const [name, file, flavour, version] of cases) t.same(parseNvidiaVersion(read(file)), { ok: true, value: { flavour, version } }, name);
  t.equal(parseNvidiaVersion('GCC version: 12\n').ok, false);
  // The number right after "Kernel Module [for <arch>]", never one further on the line.
  for (const bad of ['NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570. 133.20  Release Build  (x@y)  Thu Oct 19 18:42:12 UTC 2023', 'NVRM version: NVIDIA UNIX x86_64 Kernel Module  v535  Release 535.129.03 ', 'NVRM version: NVIDIA UNIX x86_64 Kernel Module'])
    t.same(parseNvidiaVersion(`${bad}\n`), { ok: false, error: `no version number after "Kernel Module" in ${JSON.stringify(bad.slice(0, 120))}` }, bad);
});

t.test('scontrol show node -o from real Slurm 22.05.8', async (t) => {
  const idle = parseShowNode(read(fixture('scontrol/show_node_o_idle_22.05.8.txt')), 'vm');
  t.same(idle, { ok: true, value: { name: 'vm', state: 'IDLE', reason: null, reasonUser: null, reasonTime: null } });
  const ours = parseShowNode(read(fixture('scontrol/show_node_o_drain_gdrgate_22.05.8.txt')), 'vm');
  t.same(ours, { ok: true, value: { name: 'vm', state: 'IDLE+DRAIN', reason: 'gdrgate: pcie-link 0000:00:06.0 Gen5 x8 (want Gen5 x16) job=42', reasonUser: 'root', reasonTime: '2026-11-29T14:39:05' } });
  const admin = parseShowNode(read(fixture('scontrol/show_node_o_drain_rack_maintenance_22.05.8.txt')), 'vm');
  t.equal(admin.ok && admin.value.reason, 'rack maintenance');
  t.equal(parseShowNode(read(fixture('scontrol/show_node_o_not_found_stderr_22.05.8.txt')), 'vm').ok, false);
  t.equal(parseShowNode('', 'vm').ok, false);
  for (const [s, want] of [['IDLE', false], ['IDLE+DRAIN', true], ['MIXED+DRAIN', true], ['DOWN+NOT_RESPONDING', true], ['ALLOCATED', false], ['IDLE+COMPLETING', false], ['DRAINED', true]] as const)
    t.equal(isDrainedOrDown(s), want, s);
});

// CPU range sets (topo/classify.ts: a device's online local CPUs must all lie on listed NUMA nodes).
t.test('cpu ranges: merged in any order, the part of one within another, and whether one covers another', async (t) => {
  t.same(mergeCpus([[48, 95], [0, 47], [144, 191], [96, 143]]), [[0, 191]]);
  t.same(mergeCpus([[5, 9], [0, 3], [2, 4]]), [[0, 9]]);
  t.same(mergeCpus([[0, 47], [8, 15], [40, 50]]), [[0, 50]], 'a range inside an earlier one: the earlier end kept');
  t.same(cpusWithin([[0, 65536]], [[0, 47], [96, 143]]), [[0, 47], [96, 143]], 'arm64 cpu_all_mask, cut to the online CPUs');
  t.same(cpusWithin([[10, 20]], [[0, 5]]), []);
  t.same([cpusCovered([[0, 47], [96, 143]], [[0, 191]]), cpusCovered([[0, 191]], [[0, 95], [97, 191]]), cpusCovered([], [])], [true, false, true]);
});
