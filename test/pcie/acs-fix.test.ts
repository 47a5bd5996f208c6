// The setpci command pcie-acs advises, run by the real setpci (-D: nothing written) on a real PLX 8749 port's config
// space: it sets exactly the mask's bits and keeps every other bit of ACS Control (7-15 included) as it was.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { acsFix, acsMask, applyMask, MASK, meets } from '../../src/pcie/acs-mask.js';
import { scratchDir } from '../helpers/scratch.js';

const SETPCI = '/usr/bin/setpci';
/** N1SDP's PLX 8749 downstream port 02:08.0 (test/fixtures/pci-config/SOURCES.md): ACS at 0xf24, ACS Control at 0xf2a. */
const BLOB = readFileSync(fileURLToPath(new URL('../fixtures/pci-config/n1sdp_plx8749_02_08_0_dsp_ext_reassembled_acs_reqredir.bin', import.meta.url)));
const CTL = 0xf2a;

/** ACS Control after `setpci -D -v` ran `write` (the part after ECAP_ACS+0x6.w=) on the port holding `start`. */
function setpciResult(dir: string, start: number, write: string): number {
  const b = Buffer.from(BLOB);
  b.writeUInt16LE(start, CTL);
  const lines = ['00:08.0 PCI bridge: PLX Technology PEX 8749 (ACS Control set for the test)'];
  for (let at = 0; at < b.length; at += 16) lines.push(`${at.toString(16).padStart(3, '0')}: ${[...b.subarray(at, at + 16)].map((x) => x.toString(16).padStart(2, '0')).join(' ')}`);
  const dump = path.join(dir, 'port.dump');
  writeFileSync(dump, `${lines.join('\n')}\n`);
  const said = execFileSync(SETPCI, ['-v', '-D', '-A', 'dump', '-O', `dump.name=${dump}`, '-s', '00:08.0', `ECAP_ACS+0x6.w=${write}`], { encoding: 'utf8' });
  // "0000:00:08.0 (ecap 000d @f24) @f2a 001d->(0000:002c)->0011"
  const m = /@f2a ([0-9a-f]{4})->\([0-9a-f:]+\)->([0-9a-f]{4})$/m.exec(said);
  if (!m || parseInt(m[1]!, 16) !== start) throw new Error(`setpci said ${JSON.stringify(said)}`);
  return parseInt(m[2]!, 16);
}

t.test('the advised setpci leaves ACS Control as the mask wants it, its other bits untouched', async (t) => {
  if (!existsSync(SETPCI)) {
    if (process.env.CI) t.fail(`${SETPCI} is required in CI (apt-get install pciutils)`);
    else t.pass('setpci oracle', { skip: `${SETPCI} not installed` });
    return;
  }
  const dir = scratchDir('gdrgate-setpci-');
  const masks = [MASK.noRedirect, MASK.isolated, MASK.isolatedVera, MASK.off, acsMask('xx110x1'), acsMask('xx111x0'), acsMask('1x111x1')];
  // 0x109d: the kernel's isolation set plus I/O Request Blocking (bit 7) and Unclaimed Request Redirect (bit 12).
  for (const start of [0x0000, 0x001d, 0x0004, 0x109d, 0xffff]) {
    for (const m of masks) {
      const write = /ECAP_ACS\+0x6\.w=([0-9a-f]{4}:[0-9a-f]{4}) /.exec(acsFix('0000:00:08.0', m))?.[1] ?? '';
      const after = setpciResult(dir, start, write);
      t.equal(after, applyMask(start, m), `0x${start.toString(16)} with ${m.text}: ${write}`);
      t.ok(meets(after, m), `meets ${m.text}`);
      t.equal(after & 0xff80, start & 0xff80, 'bits 7-15 as they were');
    }
  }
});
