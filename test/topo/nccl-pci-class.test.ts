// A pci element NCCL's loader cannot take (topo.cc ncclTopoAddPci requires its class) is never written: no file.
// NCCL 2.28.9 on an H100 VM failed its communicator's init on such a file: "graph/xml.h:101 NCCL WARN Attribute class of
// node pci not found" (a bridge above the GPU without class; the same file with class="0x060400" ran an all_reduce).
// NCCL refills a class from the job's /sys only for the elements above its own GPU that the job can see, never for an
// adapter's: a job whose /sys differs from the host's (the reason for the file) fails its init.
import { readlinkSync, rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { FsHost } from '../../src/host/fs-host.js';
import { buildInventory } from '../../src/inventory/build.js';
import { readNcclTopo } from '../../src/topo/nccl-read.js';
import { buildNcclXml, NcclXmlError, renderNcclXml, textsFrom } from '../../src/topo/nccl-xml.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { node as HGX } from '../gen/topologies/sglang30401-hgx-h100.js';
import { scratchDirAsync, TREE_TMP } from '../helpers/scratch.js';

const said = async (f: () => Promise<unknown>): Promise<unknown> => {
  try {
    return await f();
  } catch (e) {
    return e instanceof NcclXmlError ? e.message : e;
  }
};

t.test('the HGX H100 tree with one switch port\'s class file gone: no file, and why', async (t) => {
  const dir = await scratchDirAsync('gdrgate-ncclclass-', TREE_TMP);
  await buildTree(dir, HGX);
  const first = async (): Promise<string> => renderNcclXml(await readNcclTopo(new FsHost(dir), await buildInventory(new FsHost(dir), { slurmdPidFiles: [] })));
  const whole = await first();
  const usp = /<pci busid="([^"]+)" class="0x060400"/.exec(whole)?.[1] ?? '';
  t.equal(usp, '0000:16:00.0', "the first GPU's switch");
  const dev = path.resolve(dir, 'sys/bus/pci/devices', readlinkSync(path.join(dir, 'sys/bus/pci/devices', usp)));
  rmSync(path.join(dev, 'class'));
  const kernelPath = dev.slice(dir.length);
  t.equal(await said(first), `<pci busid="${usp}">: its class could not be read (${kernelPath}/class): NCCL requires it of every pci element of a topology file`, 'refused, the file named');
});

t.test('an endpoint whose class cannot be read gets the class NCCL gives it; a bridge none', async (t) => {
  const RP = '/sys/devices/pci0000:17/0000:17:01.0';
  const USP = `${RP}/0000:18:00.0`;
  const GPU = `${USP}/0000:19:00.0/0000:1a:00.0`;
  const cpu = { arch: 'x86_64', vendor: 'AuthenticAMD', familyid: 175, modelid: 1 } as const;
  const tree = buildNcclXml(textsFrom([[`${USP}/class`, '0x060400\n']]), [{ sysPath: GPU, kind: 'gpu' }], cpu);
  t.same(tree.subs[0]!.subs[0]!.subs[0]!.attrs.slice(0, 2), [['busid', '0000:1a:00.0'], ['class', '0x03']], "ncclTopoFillGpu's 0x03");
  t.equal(await said(async () => buildNcclXml(new Map(), [{ sysPath: GPU, kind: 'gpu' }], cpu)), `<pci busid="0000:18:00.0">: its class could not be read (${USP}/class): NCCL requires it of every pci element of a topology file`, "the GPU's switch without one: refused");
});
