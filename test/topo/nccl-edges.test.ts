// NCCL's topology rules at their edges (src/graph/xml.cc, topo.cc), each case one that a change to the rule would
// alter: the parent walk's per-level check, the files asked for, a speed tie, and the CPU vendors whose model NCCL reads.
import t from 'tap';
import { buildNcclXml, cpuMissing, ncclParent, pciAttrs, pciFiles, renderNcclXml, textsFrom, type NcclCpu, type XmlNode } from '../../src/topo/nccl-xml.js';
import { thrown } from '../helpers/thrown.js';

const RC = '/sys/devices/pci0000:17';
const RP = `${RC}/0000:17:01.0`;
const USP = `${RP}/0000:18:00.0`;
const DSP = `${USP}/0000:19:00.0`;
const GPU = `${DSP}/0000:1a:00.0`;
const OWN = ['class', 'vendor', 'device', 'subsystem_vendor', 'subsystem_device', 'max_link_speed', 'max_link_width'];
const PORT = ['max_link_speed', 'max_link_width'];

t.test('the parent walk checks each of the two levels it rewinds: a bridge below a non-bus-id level hangs from the CPU', async (t) => {
  // A VMD root port: its sysfs parent is the VMD bus (pci10000:00), whose own parent is the VMD device, a bus id.
  // NCCL stops at the first level that is no bus id (checkBDFFormat per '/'), so the root port hangs from the CPU.
  const vmdPort = '/sys/devices/pci0000:00/0000:00:0e.0/pci10000:00/10000:00:02.0';
  t.same(ncclParent(vmdPort), { cpuOf: vmdPort });
});

t.test('the files NCCL reads: each element\'s own, its sysfs parent\'s link, numa_node of the top ones, merged per directory', async (t) => {
  t.same([...pciFiles([GPU, USP], [USP])], [[GPU, OWN], [DSP, PORT], [USP, [...OWN, 'numa_node']], [RP, PORT]]);
  // An element that is also another element's sysfs parent (an endpoint on a switch's downstream port, itself an
  // endpoint): its own files, the link files once, and its numa_node when it is a top one.
  t.same([...pciFiles([GPU, DSP], [DSP])], [[GPU, OWN], [DSP, [...PORT, ...OWN.slice(0, 5), 'numa_node']], [USP, PORT]]);
});

t.test('link speed: a tie keeps the device\'s text, as NCCL\'s "port < device" does', async (t) => {
  const speed = (dev: string | null, port: string | null): string | undefined => {
    const m: [string, string][] = [];
    if (dev !== null) m.push([`${GPU}/max_link_speed`, `${dev}\n`]);
    if (port !== null) m.push([`${DSP}/max_link_speed`, `${port}\n`]);
    return pciAttrs(textsFrom(m), GPU, 'gpu').find(([k]) => k === 'link_speed')?.[1];
  };
  t.equal(speed('Unknown', null), 'Unknown', 'no port file and no number on the device: both FLT_MAX, the device\'s text');
  t.equal(speed(null, 'Unknown'), '', 'the device unreadable, the port Unknown: the device\'s empty text');
});

t.test('the x86 vendors whose cpu element must carry familyid and modelid: Intel and both Zhaoxin strings', async (t) => {
  const why = "the CPU's family and model could not be read (/sys/devices/system/cpu/modalias, /proc/cpuinfo): NCCL requires it of every cpu element of a topology file";
  const cpu = (vendor: string): NcclCpu => ({ arch: 'x86_64', vendor, familyid: null, modelid: null });
  t.same(['GenuineIntel', 'CentaurHauls', '  Shanghai  ', 'AuthenticAMD', 'HygonGenuine'].map((v) => cpuMissing(cpu(v))), [why, why, why, null, null]);
});

t.test('two nets filed under one element share its one nic element, as ncclTopoFillNet reuses it', async (t) => {
  // Both ports of a ConnectX-8 card carry the card's VPD, so both pair with the one DMA function whose V3 is theirs.
  const DMA = `${DSP}/0000:1b:00.0`;
  const cpu: NcclCpu = { arch: 'x86_64', vendor: 'AuthenticAMD', familyid: 175, modelid: 1 };
  const x = buildNcclXml(textsFrom([[`${USP}/class`, '0x060400\n'], [`${DMA}/class`, '0x020000\n']]), [
    { sysPath: DMA, kind: 'nic', net: { name: 'mlx5_0_dma' } },
    { sysPath: DMA, kind: 'nic', net: { name: 'mlx5_1_dma' } },
  ], cpu);
  t.same(x.subs[0]!.subs[0]!.subs[0]!.subs, [{ name: 'nic', attrs: [], subs: [{ name: 'net', attrs: [['name', 'mlx5_0_dma']], subs: [] }, { name: 'net', attrs: [['name', 'mlx5_1_dma']], subs: [] }] }]);
});

t.test('every control character is refused in a value, DEL included', async (t) => {
  const net = (name: string): XmlNode => ({ name: 'system', attrs: [['version', '1']], subs: [{ name: 'net', attrs: [['name', name]], subs: [] }] });
  t.same(['a\u007fb', 'a\u0000b', 'a\nb', 'a\u001fb'].map((v) => thrown(() => renderNcclXml(net(v)))), ['a\u007fb', 'a\u0000b', 'a\nb', 'a\u001fb'].map((v) => `<net name=${JSON.stringify(v)}>: a character NCCL's topology reader would not read as written (it decodes no entity)`));
  t.equal(renderNcclXml(net('mlx5_0')), '<system version="1">\n  <net name="mlx5_0"/>\n</system>\n');
});
