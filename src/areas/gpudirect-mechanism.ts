// The kernel mechanism that pins GPU memory for the NIC (gpudirect-mechanism): nvidia_peermem's files and DMA-BUF's
// preconditions, read by the shared inventory pass. A drill takes both away.
import { gpudirect } from '../compare/node.js';
import { PEERMEM_FILES } from '../inventory/gpudirect.js';
import { text } from './stage.js';
import { defineArea } from './types.js';

/** The peermem module as /sys/module and /proc/modules name it (drivers/nvidia-peermem). */
const PEERMEM_MOD = 'nvidia_peermem';
const PEER_DIR = `/sys/module/${PEERMEM_MOD}`;

export type MechanismFault = { readonly kind: 'gpudirect-mechanism'; readonly value: 'none' };

export default defineArea<'gpudirect-mechanism', MechanismFault>({
  id: 'gpudirect-mechanism',
  title: 'the GPUDirect RDMA mechanism (nvidia_peermem or DMA-BUF) the node offers',
  compare: gpudirect,
  fault: {
    syntax: 'gpudirect-mechanism=none',
    subject: null,
    parse(_subject, value) {
      if (value !== 'none') return { ok: false, error: 'the only gpudirect-mechanism fault is gpudirect-mechanism=none' };
      return { ok: true, value: { kind: 'gpudirect-mechanism', value: 'none' } };
    },
    format: () => 'gpudirect-mechanism=none',
    stage: {
      hides: (_f, p) => Object.values(PEERMEM_FILES).includes(p as never) || p === PEER_DIR || p.startsWith(`${PEER_DIR}/`) || p.startsWith('/sys/kernel/mm/memory_peers/'),
      rewrite(_f, p, b) {
        // DMA-BUF made impossible through the kernel release (RDMA imports DMA-BUF from 5.12): the driver keeps its
        // identity, so device-inventory does not fail too and the drill stays one fault (a kernel change only warns).
        if (p === '/proc/sys/kernel/osrelease') return Buffer.from('5.4.0-gdrgate-drill\n');
        if (p === '/proc/version') return Buffer.from(text(b).replace(/^Linux version \S+/, 'Linux version 5.4.0-gdrgate-drill'));
        if (p === '/proc/modules') return Buffer.from(text(b).split('\n').filter((l) => l.split(' ')[0] !== PEERMEM_MOD).join('\n'));
        return b;
      },
    },
  },
});
