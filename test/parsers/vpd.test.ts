// The `vpd` parser (PCIe Base 6.3 §6.27 resource data items): the ConnectX-8 layout the GB300 model carries, items cut
// short or malformed, and a seeded mutation run in which it never throws and never reads past the file.
import t from 'tap';
import { parseVpd } from '../../src/parsers/vpd.js';
import { vpdBytes } from '../gen/vpd-gen.js';

const CX8 = { name: 'NVIDIA Dual ConnectX-8 SuperNIC C8280Z Mezzanine Board for GB300 NVL72 systems', pn: '900-9X8BZ-0057-ST0', sn: 'MT2447XZ00A1', v3: '5d1c0a7e-3b52-4e1f-9a4c-000000000000' };

t.test('a ConnectX-8 VPD: the product name, then VPD-R with PN, SN, V3 and the checksum RV', async (t) => {
  const v = parseVpd(vpdBytes(CX8));
  t.equal(v?.name, CX8.name);
  t.same(v ? [...v.ro.keys()] : null, ['PN', 'SN', 'V3', 'RV']);
  t.equal(v?.ro.get('V3'), CX8.v3);
  t.equal(v?.ro.get('SN'), CX8.sn);
});

t.test('what is read whole stands; what is cut short or malformed ends the reading', async (t) => {
  const bytes = vpdBytes(CX8);
  t.equal(parseVpd(new Uint8Array(0)), null, 'an empty file: no VPD');
  t.equal(parseVpd(Uint8Array.of(0x78)), null, 'End alone: no item');
  const nameOnly = parseVpd(bytes.subarray(0, 3 + CX8.name.length));
  t.same([nameOnly?.name, nameOnly?.ro.size], [CX8.name, 0], 'cut after the name: the name, no keyword');
  t.equal(parseVpd(bytes.subarray(0, 3 + CX8.name.length - 1)), null, 'the name cut short: nothing reads whole');
  t.equal(parseVpd(bytes.subarray(0, bytes.length - 2))?.ro.get('V3'), undefined, 'VPD-R cut short: its keywords are not taken');
  // A keyword whose length runs past VPD-R's end: the keywords before it stand.
  const body = Buffer.concat([Buffer.from('SN\x03abc', 'latin1'), Buffer.from('V3\x09abc', 'latin1')]);
  const ro = Buffer.concat([Buffer.from([0x90, body.length, 0]), body, Buffer.from([0x78])]);
  t.same(parseVpd(ro) ? [...parseVpd(ro)!.ro] : null, [['SN', 'abc']]);
  // Non-ASCII data: that keyword left out, not mangled.
  const odd = Buffer.concat([Buffer.from([0x90, 7, 0]), Buffer.from('V3\x04', 'latin1'), Buffer.from([0x61, 0xff, 0x62, 0x63]), Buffer.from([0x78])]);
  t.same([...(parseVpd(odd)?.ro ?? new Map())], []);
  // A small item before the name (a vendor's), and End stopping the reading before anything after it.
  const withSmall = Buffer.concat([Buffer.from([0x71, 0x00]), bytes]);
  t.equal(parseVpd(withSmall)?.ro.get('V3'), CX8.v3, 'a small item is stepped over');
  t.equal(parseVpd(Buffer.concat([Buffer.from([0x78]), bytes])), null, 'End first: nothing after it is read');
});

t.test('seeded mutations: never a throw, every keyword one that lies within the file', async (t) => {
  let seed = 0x5eed;
  const rand = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  const base = vpdBytes(CX8);
  let runs = 0;
  let withV3 = 0;
  for (let i = 0; i < 5000; i++) {
    const b = Buffer.from(base.subarray(0, rand(base.length + 1)));
    for (let k = rand(4); k > 0 && b.length > 0; k--) b[rand(b.length)] = rand(256);
    const v = parseVpd(b);
    runs++;
    const text = b.toString('latin1');
    for (const [key, value] of v?.ro ?? []) if (!text.includes(`${key}${String.fromCharCode(value.length)}${value}`)) t.fail(`keyword ${key} not in the bytes`);
    if (v?.ro.get('V3') === CX8.v3) withV3++;
  }
  t.equal(runs, 5000);
  t.ok(withV3 > 0, `the V3 read in ${withV3} of the mutated files`);
});
