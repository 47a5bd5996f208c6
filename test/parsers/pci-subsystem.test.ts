// Subsystem IDs decoded from config space agree with the kernel's subsystem_vendor/subsystem_device on real blobs.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parsePciConfig, sparseConfig } from '../../src/parsers/pci-config.js';

const path = (rel: string): string => fileURLToPath(new URL(rel, import.meta.url));
const H200 = path('../../examples/h200-vm/sys/devices/pci0000:00/');
const PLX_DSP = new Uint8Array(readFileSync(path('../fixtures/pci-config/n1sdp_plx8749_02_08_0_dsp_256.bin')));
const LSPCI = readFileSync(path('../fixtures/lspci/n1sdp_plx8749_downstream_ports_acs_enabled_reqredir.txt'), 'utf8');
const text = (s: { state: string; value?: { vendor: number; device: number } }): string =>
  s.state === 'present' ? [s.value!.vendor, s.value!.device].map((n) => `0x${n.toString(16).padStart(4, '0')}\n`).join('') : s.state;

t.test('H200 VM (type 0 headers, 256 and 4096 bytes): what the kernel printed for every function', async (t) => {
  const slots = readdirSync(H200).filter((s) => /^0000:/.test(s));
  t.equal(slots.length, 7, 'seven functions captured');
  for (const s of slots) {
    const cfg = parsePciConfig(new Uint8Array(readFileSync(`${H200}${s}/config`)));
    t.equal(text(cfg.subsystem), readFileSync(`${H200}${s}/subsystem_vendor`, 'utf8') + readFileSync(`${H200}${s}/subsystem_device`, 'utf8'), s);
  }
});

t.test('PLX PEX 8749 downstream port (type 1): the Subsystem ID capability at 0xa4, as lspci lists it', async (t) => {
  t.match(LSPCI, /^\tCapabilities: \[a4\] Subsystem: PLX Technology, Inc\. Device 8749$/m, 'the capture names the capability at 0xa4');
  const cfg = parsePciConfig(PLX_DSP);
  t.equal(cfg.headerType, 1);
  t.same(cfg.subsystem, { state: 'present', value: { vendor: 0x10b5, device: 0x8749 } });
  // The live gate reads config part by part: the capability's ids must be among the parts.
  const sparse = parsePciConfig(sparseConfig((o, n) => PLX_DSP.subarray(o, o + n)));
  t.same(sparse.subsystem, cfg.subsystem, 'the same from the parts a live read takes');
});

t.test('a bridge without the capability, a header alone, a function that did not answer', async (t) => {
  const cut = Uint8Array.from(PLX_DSP);
  const pcie = parsePciConfig(PLX_DSP).capabilities.find((c) => c.id === 0x10)!.offset;
  t.equal(cut[pcie + 1], 0xa4, 'the PCI Express capability points at it');
  cut[pcie + 1] = 0; // end the list before it
  t.same(parsePciConfig(cut).subsystem, { state: 'absent' }, 'walked to the end without one: the kernel shows 0x0000');
  t.equal(parsePciConfig(PLX_DSP.subarray(0, 64)).subsystem.state, 'unknown', 'a bridge read unprivileged: its capabilities are beyond the header');
  const gpu = new Uint8Array(readFileSync(`${H200}0000:00:06.0/config`));
  t.same(parsePciConfig(gpu.subarray(0, 64)).subsystem, { state: 'present', value: { vendor: 0x10de, device: 0x18bf } }, 'an endpoint read unprivileged: the header has them');
  t.equal(parsePciConfig(new Uint8Array(256).fill(0xff)).subsystem.state, 'unknown', 'all ones: nobody answered');
});
