// pcie-ats: ATS on GPUs and NICs, enforced only on a virtualized class and only where the reference node had it on.
import { allDevices, type GenNode } from '../gen/sysfs-tree.js';
import { detach, dev, extAllOnes, extLoop, GPUS, hgx, NICS, P0, softRoce, table, type Want } from './_trees.js';

/** The reference of a virtualized class: ATS enabled on every GPU and NIC (the HGX tree has the capability, disabled). */
const ATS_ON: GenNode = hgx();
for (const d of allDevices(ATS_ON)) if (d.kind === 'gpu' || d.kind === 'nic') d.ats = true;

const ats = (enabled: boolean | undefined) => (n: GenNode): void => void (dev(n, P0.nic).ats = enabled);
const notRequired = (subject: string, actual = 'disabled'): Want => ({ status: 'pass', code: 'ats-ok', subject, expected: 'not required', actual });
const enabled = (subject: string): Want => ({ status: 'pass', code: 'ats-ok', subject, expected: 'enabled', actual: 'enabled (STU 0)' });
const off = (actual: string): Want => ({ status: 'fail', code: 'ats-off', subject: P0.nic, expected: 'enabled', actual });
const unreadable: Want = { status: 'skip', code: 'ats-unreadable', subject: P0.nic };
const na: Want = { status: 'skip', code: 'ats-na', subject: 'node' };
/** Every GPU and RDMA adapter taken off the bus (the switches stay). */
const noDevices = (n: GenNode): void => [...GPUS, ...NICS].forEach((b) => detach(n, b));

export const cases = table('pcie-ats', [
  {
    name: 'valid: healthy bare-metal HGX, ATS capability present and disabled, nothing required',
    subjects: [P0.gpu, P0.nic],
    bare: [notRequired(P0.gpu), notRequired(P0.nic)],
    based: [notRequired(P0.gpu), notRequired(P0.nic)],
  },
  {
    name: 'valid: virtualized class with ATS enabled on GPU and NIC, as captured',
    from: ATS_ON,
    platform: 'virtualized',
    subjects: [P0.gpu, P0.nic],
    bare: [notRequired(P0.gpu, 'enabled (STU 0)'), notRequired(P0.nic, 'enabled (STU 0)')],
    based: [enabled(P0.gpu), enabled(P0.nic)],
  },
  {
    name: 'invalid: virtualized baseline expects ATS on GPU and NIC, ATS disabled on the NIC',
    from: ATS_ON,
    platform: 'virtualized',
    change: ats(false),
    bare: [],
    based: [off('disabled')],
  },
  {
    name: 'invalid: virtualized baseline, NIC firmware hides the ATS capability',
    from: ATS_ON,
    platform: 'virtualized',
    change: ats(undefined),
    bare: [],
    based: [off('no ATS capability')],
  },
  {
    name: 'skip: virtualized baseline expects ATS, the NIC\'s extended list loops back to 0x100 before ATS: never "no ATS"',
    from: ATS_ON,
    platform: 'virtualized',
    patch: extLoop(P0.nic),
    subjects: [P0.nic],
    bare: [unreadable],
    based: [unreadable],
  },
  {
    name: 'skip: virtualized baseline expects ATS, the NIC\'s extended space reads all ones from 0x100: never "no ATS"',
    from: ATS_ON,
    platform: 'virtualized',
    patch: extAllOnes(P0.nic),
    subjects: [P0.nic],
    bare: [unreadable],
    based: [unreadable],
  },
  {
    name: 'valid: same NIC with ATS disabled against a bare-metal baseline: not enforced',
    from: ATS_ON,
    change: ats(false),
    subjects: [P0.nic],
    bare: [notRequired(P0.nic)],
    based: [notRequired(P0.nic)],
  },
  {
    name: 'valid: virtualized class captured with ATS off everywhere: nothing to enforce',
    platform: 'virtualized',
    bare: [],
    based: [],
  },
  {
    name: 'skip: NIC config read as non-root (64 bytes), virtualized baseline: not pass, not fail',
    from: ATS_ON,
    platform: 'virtualized',
    change: (n) => void (dev(n, P0.nic).configBytes = 64),
    bare: [unreadable],
    based: [unreadable],
  },
  {
    name: 'skip: no GPU and no RDMA adapter on the bus (ats-na, not an empty list)',
    change: noDevices,
    bare: [na],
    based: [na],
  },
  {
    name: 'skip: no GPU, the only RDMA device a soft-RoCE rxe0 (no PCI function, nothing to read ATS from)',
    change: noDevices,
    patch: softRoce(),
    bare: [na],
    based: [na],
  },
]);
