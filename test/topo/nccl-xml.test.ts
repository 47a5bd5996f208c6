// NCCL's topology rules as gdrgate applies them (src/graph/xml.cc ncclTopoGetXmlFromSys), case by case over file texts.
import t from 'tap';
import { checkNodeRoom, NCCL_MAX_NODES, ncclMergedPath } from '../../src/topo/nccl-limits.js';
import { buildNcclXml, cpuMissing, escapeAttr, NcclXmlError, ncclParent, pciAttrs, renderNcclXml, strtol0, textsFrom, type NcclCpu, type Texts, type XmlNode } from '../../src/topo/nccl-xml.js';
import { parseCpuIdentity } from '../../src/topo/nccl-read.js';
import { parseNcclXml } from '../../src/topo/nccl-diff.js';

const RC = '/sys/devices/pci0000:17';
const RP = `${RC}/0000:17:01.0`;
const USP = `${RP}/0000:18:00.0`;
const DSP = `${USP}/0000:19:00.0`;
const GPU = `${DSP}/0000:1a:00.0`;
const NO_CPU: NcclCpu = { arch: null, vendor: null, familyid: null, modelid: null };

t.test('the parent is two sysfs levels up; a level that is not a bus id is the CPU', async (t) => {
  t.same(ncclParent(GPU), { pci: USP }, 'a switch downstream port gets no element');
  t.same(ncclParent(USP), { cpuOf: USP }, 'above the root port is the host bridge: the upstream port hangs from the CPU');
  t.same(ncclParent(RP), { cpuOf: RP }, 'a device on the root bus hangs from the CPU');
  t.same(ncclParent('/sys/devices/pci0000:00/0000:00:0e.0/pci10000:00/10000:00:02.0/10000:01:00.0'), { cpuOf: '/sys/devices/pci0000:00/0000:00:0e.0/pci10000:00/10000:00:02.0/10000:01:00.0' }, 'a VMD domain bus id (5 hex digits) is not a bus id to NCCL');
});

t.test('link: the slower and narrower of the device and its port, from max_link_*', async (t) => {
  const texts = (dev: [string, string] | null, port: [string, string] | null): Texts => {
    const m: [string, string][] = [];
    if (dev) m.push([`${GPU}/max_link_speed`, `${dev[0]}\n`], [`${GPU}/max_link_width`, `${dev[1]}\n`]);
    if (port) m.push([`${DSP}/max_link_speed`, `${port[0]}\n`], [`${DSP}/max_link_width`, `${port[1]}\n`]);
    return textsFrom(m);
  };
  const link = (m: Texts): string[] => pciAttrs(m, GPU, 'gpu').filter(([k]) => k.startsWith('link_')).map(([, v]) => v);
  t.same(link(texts(['32.0 GT/s PCIe', '16'], ['16.0 GT/s PCIe', '8'])), ['16.0 GT/s PCIe', '8'], 'port slower and narrower');
  t.same(link(texts(['8.0 GT/s PCIe', '4'], ['32.0 GT/s PCIe', '16'])), ['8.0 GT/s PCIe', '4'], 'device slower and narrower');
  t.same(link(texts(['32.0 GT/s PCIe', '16'], null)), ['32.0 GT/s PCIe', '0'], 'no port files (root bus): own speed, width 0');
  t.same(link(texts(['Unknown', '16'], ['16.0 GT/s PCIe', '16'])), ['16.0 GT/s PCIe', '16'], 'an Unknown speed loses to a number');
  t.same(link(texts(null, null)), ['', '0'], 'nothing readable: NCCL writes an empty speed and width 0');
});

t.test('pci attributes: sysfs text less its newline, in NCCL order; unreadable ones left out, class defaulted for endpoints', async (t) => {
  const m = textsFrom([[`${GPU}/class`, '0x030200\n'], [`${GPU}/vendor`, '0x10de\n'], [`${GPU}/subsystem_device`, '0x16c1\n']]);
  t.same(pciAttrs(m, GPU, 'gpu').map(([k]) => k), ['busid', 'class', 'vendor', 'subsystem_device', 'link_speed', 'link_width']);
  t.same(pciAttrs(new Map(), GPU, 'nic')[1], ['class', '0x02'], 'an adapter whose class cannot be read is a NIC to NCCL');
  t.same(pciAttrs(new Map(), GPU, 'gpu')[1], ['class', '0x03']);
  t.equal(pciAttrs(new Map(), USP, 'bridge')[1]![0], 'link_speed', 'a bridge gets no made-up class');
});

t.test('strtol base 0', async (t) => {
  for (const [s, v] of [['16', 16], ['0x10', 16], ['010', 8], ['', 0], ['x', 0], ['-1', -1], [' 4', 4], ['08', 0]] as const) t.equal(strtol0(s), v, JSON.stringify(s));
});

t.test("the element NCCL's IB transport files an adapter function under (ncclIbGetPciPath, NCCL_IB_MERGE_VFS on)", async (t) => {
  t.equal(ncclMergedPath(`${DSP}/0000:1b:00.0`), `${DSP}/0000:1b:00.0`, 'function 0: its own');
  t.equal(ncclMergedPath(`${DSP}/0000:1b:00.1`), `${DSP}/0000:1b:00.0`, "a card's second port: function 0");
  t.equal(ncclMergedPath(`${DSP}/0000:1b:1f.7`), `${DSP}/0000:1b:00.0`, 'a VF (ARI routing id 255): device and function 0');
  t.equal(ncclMergedPath(`${DSP}/0000:1b:01.2`), `${DSP}/0000:1b:00.0`);
  t.equal(ncclMergedPath('/sys/devices/pci0000:00/0000:00:0e.0/pci10000:00/10000:00:02.0/10000:01:00.1'), '/sys/devices/pci0000:00/0000:00:0e.0/pci10000:00/10000:00:02.0/10000:01:00.0', 'a VMD domain: the digits counted from the end, as NCCL does');
  t.equal(ncclMergedPath('/sys/devices/platform/x/rxe0'), '/sys/devices/platform/x/rxe0', 'no bus id: as it is');
});

t.test("room in NCCL's 256-element table for the file and what NCCL adds to it", async (t) => {
  const flat = (n: number): XmlNode => ({ name: 'system', attrs: [], subs: Array.from({ length: n - 1 }, () => ({ name: 'pci', attrs: [], subs: [] })) });
  t.equal(NCCL_MAX_NODES, 256);
  // 8 GPUs: each a gpu element and up to 8 nvlink ones (7 peers or the NVSwitches, 1 CPU): 72; 10 nets left: 20.
  t.doesNotThrow(() => checkNodeRoom(flat(256 - 72 - 20), 8, 10), 'exactly full');
  const said = ((): unknown => {
    try {
      checkNodeRoom(flat(256 - 72 - 20 + 1), 8, 10);
      return null;
    } catch (e) {
      return e instanceof NcclXmlError ? e.message : e;
    }
  })();
  t.equal(said, "165 elements, and NCCL adds up to 92 of its own (8 GPUs' gpu and nvlink elements, 10 adapters' nets): more than the 256 NCCL's topology reader holds (NCCL_TOPO_XML_MAX_NODES)", 'one over: refused, said');
  t.doesNotThrow(() => checkNodeRoom(flat(256 - 64), 0, 5000), 'nets left to NCCL count at most its 32 IB devices');
  t.throws(() => checkNodeRoom(flat(256 - 63), 0, 5000), NcclXmlError);
});

t.test('the tree: cpus by numaid with their cpumap, children by bus id, nets under their adapter', async (t) => {
  const NIC = `${DSP.replace('19:00.0', '19:01.0')}/0000:1b:00.0`;
  const OTHER = '/sys/devices/pci0000:00/0000:00:06.0';
  const m = textsFrom([
    [`${USP}/numa_node`, '1\n'], [`${OTHER}/numa_node`, '-1\n'], ['/sys/devices/system/node/node1/cpumap', 'ffff0000\n'],
    [`${GPU}/class`, '0x030200\n'], [`${NIC}/class`, '0x020700\n'], [`${USP}/class`, '0x060400\n'],
  ]);
  const x = buildNcclXml(m, [
    { sysPath: NIC, kind: 'nic', net: { name: 'mlx5_0' } },
    { sysPath: OTHER, kind: 'gpu' },
    { sysPath: GPU, kind: 'gpu' },
  ], { arch: 'x86_64', vendor: 'GenuineIntel', familyid: 6, modelid: 143 });
  t.same(x.subs.map((c) => c.attrs), [
    [['numaid', '-1'], ['arch', 'x86_64'], ['vendor', 'GenuineIntel'], ['familyid', '6'], ['modelid', '143']],
    [['numaid', '1'], ['affinity', 'ffff0000'], ['arch', 'x86_64'], ['vendor', 'GenuineIntel'], ['familyid', '6'], ['modelid', '143']],
  ], 'numa -1 has no cpumap: NCCL fills the affinity itself');
  const usp = x.subs[1]!.subs[0]!;
  t.same(usp.subs.map((s) => s.attrs[0]), [['busid', '0000:1a:00.0'], ['busid', '0000:1b:00.0']], 'sorted by bus id whatever the order met');
  t.same(usp.subs[1]!.subs, [{ name: 'nic', attrs: [], subs: [{ name: 'net', attrs: [['name', 'mlx5_0']], subs: [] }] }], 'the net by name alone: NCCL fills dev, speed and port');
  t.same(usp.subs[0]!.subs, [], 'no gpu element: NCCL adds it from NVML for its own GPU');
  const again = parseNcclXml(renderNcclXml(x));
  t.same(again.ok ? again.value : again.error, x, 'renders to XML that reads back the same');
  t.equal(renderNcclXml(buildNcclXml(new Map(), [], NO_CPU)), '<system version="1"/>\n');
});

t.test("a cpu element without what NCCL's reader requires (ncclTopoAddCpu) is never written: no file", async (t) => {
  // On the live node NCCL 2.28.9 failed its init on a file whose cpu lacked arch ("Attribute arch of node cpu not found").
  const why = (what: string): string => `the CPU's ${what} could not be read (/sys/devices/system/cpu/modalias, /proc/cpuinfo): NCCL requires it of every cpu element of a topology file`;
  const intel: NcclCpu = { arch: 'x86_64', vendor: 'GenuineIntel', familyid: 6, modelid: 143 };
  t.same(
    [NO_CPU, { ...intel, vendor: null }, { ...intel, modelid: null }, { ...intel, vendor: '  Shanghai  ', familyid: null }, { ...intel, vendor: 'AuthenticAMD', familyid: null, modelid: null }, { arch: 'arm64', vendor: null, familyid: null, modelid: null }, intel].map(cpuMissing),
    [why('architecture'), why('vendor'), why('family and model'), why('family and model'), null, null, null],
  );
  t.throws(() => buildNcclXml(new Map(), [{ sysPath: GPU, kind: 'gpu' }], NO_CPU), NcclXmlError, 'a GPU and no CPU identity: refused');
  t.equal(renderNcclXml(buildNcclXml(new Map(), [], NO_CPU)), '<system version="1"/>\n', 'no endpoint, no cpu element: nothing asked');
});

t.test("values NCCL's reader cannot take: a long affinity left out and said; a name needing escaping refused", async (t) => {
  // The cpumap a node with 1,024 possible CPUs exports (32 words): 287 characters, more than NCCL reads (253).
  const cpumap = Array.from({ length: 32 }, () => 'ffffffff').join(',');
  const net = (name: string): XmlNode => ({ name: 'net', attrs: [['name', name], ['dev', '0']], subs: [] });
  const tree = (affinity: string, name: string): XmlNode => ({ name: 'system', attrs: [['version', '1']], subs: [{ name: 'cpu', attrs: [['numaid', '0'], ['affinity', affinity], ['arch', 'x86_64']], subs: [net(name)] }] });
  const notes: string[] = [];
  t.equal(renderNcclXml(tree(cpumap, 'mlx5_0'), 0, notes), '<system version="1">\n  <cpu numaid="0" arch="x86_64">\n    <net name="mlx5_0" dev="0"/>\n  </cpu>\n</system>\n');
  t.same(notes, ["<cpu> affinity left out: 287 bytes, NCCL's topology reader takes at most 253 (NCCL reads it from sysfs)"]);
  const short = cpumap.slice(0, 253);
  t.equal(renderNcclXml(tree(short, 'mlx5_0')).split('\n')[1], `  <cpu numaid="0" affinity="${short}" arch="x86_64">`, '253 bytes: kept');
  for (const bad of ['mlx5_a&b', 'x"y', 'a<b', "a'b", 'a\tb'])
    t.throws(() => renderNcclXml(tree(short, bad)), NcclXmlError, `${JSON.stringify(bad)}: refused, never escaped into what NCCL would read literally`);
  t.throws(() => renderNcclXml(tree(short, 'm'.repeat(254))), NcclXmlError, 'a net name too long: refused (NCCL needs it)');
  // NCCL counts bytes (fread, one char at a time); the file is UTF-8, so a value's length is its bytes there. A text
  // that is no UTF-8 (a sysfs file's 0xff bytes) reads as U+FFFD, three bytes each.
  const said = (v: XmlNode): unknown => {
    try {
      return renderNcclXml(v);
    } catch (e) {
      return e instanceof NcclXmlError ? e.message : e;
    }
  };
  t.equal(said(tree(short, '\u00e9'.repeat(127))), "<net name>: 254 bytes, NCCL's topology reader takes at most 253", '127 two-byte characters: 254 bytes, refused');
  t.equal(said(tree(short, '\ufffd'.repeat(100))), "<net name>: 300 bytes, NCCL's topology reader takes at most 253", '100 undecodable bytes: 300 bytes as written');
  t.equal(said(tree(short, '\u00e9'.repeat(126))), `<system version="1">\n  <cpu numaid="0" affinity="${short}" arch="x86_64">\n    <net name="${'\u00e9'.repeat(126)}" dev="0"/>\n  </cpu>\n</system>\n`, '252 bytes: kept');
  const wideMap = '\u00e9'.repeat(127);
  const notesWide: string[] = [];
  t.equal(renderNcclXml(tree(wideMap, 'mlx5_0'), 0, notesWide).split('\n')[1], '  <cpu numaid="0" arch="x86_64">', 'an affinity of 254 bytes: left out');
  t.same(notesWide, ["<cpu> affinity left out: 254 bytes, NCCL's topology reader takes at most 253 (NCCL reads it from sysfs)"]);
  t.throws(() => escapeAttr('a&b'), NcclXmlError);
  t.equal(escapeAttr('0000:18:00.0'), '0000:18:00.0');
});

t.test('the CPU as NCCL records it, from the cpu modalias or /proc/cpuinfo', async (t) => {
  t.same(parseCpuIdentity('cpu:type:x86,ven0000fam0006mod008F:feature:,0000', null), { arch: 'x86_64', vendor: 'GenuineIntel', familyid: 6, modelid: 143 });
  // Zen 3: family 0x19 = 0xF + 0xA; NCCL adds the extended family shifted by 4 (175, as the Azure NCv4 file says).
  t.same(parseCpuIdentity('cpu:type:x86,ven0002fam0019mod0001:feature:,0000', null), { arch: 'x86_64', vendor: 'AuthenticAMD', familyid: 175, modelid: 1 });
  t.same(parseCpuIdentity('cpu:type:aarch64:feature:,0000,0001', null), { arch: 'arm64', vendor: null, familyid: null, modelid: null });
  t.same(parseCpuIdentity(null, 'processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 207\n\nprocessor\t: 1\n'), { arch: 'x86_64', vendor: 'GenuineIntel', familyid: 6, modelid: 207 });
  t.same(parseCpuIdentity(null, null), NO_CPU, 'nothing known: left for NCCL');
});
