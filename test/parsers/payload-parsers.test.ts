// The ASPM policy file, the link/ ASPM attributes and /proc/cmdline's pci=/pcie_aspm= options: tables on real texts
// (the live H200's kernel 6.18, an older kernel's three policies, the bundled capture's command line) and a seeded
// fuzzer: garbage never throws and never yields a value.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { aspmCtlText, parseAspmFlag, parseAspmPolicy } from '../../src/parsers/aspm.js';
import { parsePciCmdline } from '../../src/parsers/pci-cmdline.js';
import { seeded } from '../helpers/seeded.js';

const at = (rel: string): string => fileURLToPath(new URL(rel, import.meta.url));
/** The live H200's sysfs.txt: one `=== <what>` section per file, as the capture script printed them. */
const live = readFileSync(at('../fixtures/device-h200-live/raw-2026-12-01/sysfs.txt'), 'utf8');
const section = (name: string): string => {
  const m = new RegExp(`^=== ${name}\\n([^]*?)(?=^=== )`, 'm').exec(live);
  if (!m?.[1]) throw new Error(`no ${name} section`);
  return m[1];
};
const LIVE_POLICY = section('aspm policy');
const LIVE_CMDLINE = section('cmdline');
const BUNDLED_CMDLINE = readFileSync(at('../../examples/h200-vm/proc/cmdline'), 'utf8');

t.test('parseAspmPolicy', async (t) => {
  t.equal(LIVE_POLICY, '[default] performance powersave powersupersave \n', 'the live kernel writes a space after each name');
  const valid: [string, string, string[]][] = [
    [LIVE_POLICY, 'default', ['default', 'performance', 'powersave', 'powersupersave']],
    // Kernels before powersupersave (v5.5), and before the trailing newline (2020, PCI/ASPM "add missing newline").
    ['[default] performance powersave ', 'default', ['default', 'performance', 'powersave']],
    ['default [performance] powersave powersupersave \n', 'performance', ['default', 'performance', 'powersave', 'powersupersave']],
    ['default performance powersave [powersupersave] \n', 'powersupersave', ['default', 'performance', 'powersave', 'powersupersave']],
  ];
  for (const [text, active, choices] of valid) t.same(parseAspmPolicy(text), { ok: true, value: { active, choices } }, JSON.stringify(text));
  const invalid: [string, RegExp][] = [
    ['', /a word that is not a policy name/],
    ['default performance powersave \n', /0 policies in brackets/],
    ['[default] [performance]\n', /2 policies in brackets/],
    ['[Default] performance\n', /not a policy name/],
    ['[default] default\n', /listed twice/],
    ['[default]\tperformance\n', /not a policy name/],
    ['[default\0] performance\n', /not a policy name/],
    ['<html>', /not a policy name/],
    ['[' + 'a'.repeat(300) + ']', /too long/],
  ];
  for (const [text, why] of invalid) {
    const p = parseAspmPolicy(text);
    t.equal(p.ok, false, JSON.stringify(text.slice(0, 30)));
    if (!p.ok) t.match(p.error, why);
  }
});

t.test('parseAspmFlag: sysfs_emit("%d\\n") of a 0/1 state', async (t) => {
  t.same([parseAspmFlag('0\n'), parseAspmFlag('1\n'), parseAspmFlag('1')], [{ ok: true, value: false }, { ok: true, value: true }, { ok: true, value: true }]);
  for (const bad of ['', '2\n', 'on\n', '01\n', '-1\n', 'true']) t.equal(parseAspmFlag(bad).ok, false, JSON.stringify(bad));
});

t.test('aspmCtlText: Link Control bits 1:0 in lspci\'s words', async (t) => {
  t.same([0, 1, 2, 3, 4].map(aspmCtlText), ['Disabled', 'L0s Enabled', 'L1 Enabled', 'L0s L1 Enabled', 'Disabled']);
});

t.test('parsePciCmdline', async (t) => {
  const none = { busPolicy: null, aspm: null };
  const valid: [string, string, unknown][] = [
    ['the live H200 (pci=realloc=off, then -- and init\'s own arguments)', LIVE_CMDLINE, none],
    ['the bundled capture', BUNDLED_CMDLINE, none],
    ['one option', 'ro quiet pci=pcie_bus_perf', { busPolicy: 'pcie_bus_perf', aspm: null }],
    ['comma-separated with another option', 'pci=realloc=off,pcie_bus_safe', { busPolicy: 'pcie_bus_safe', aspm: null }],
    ['two pci=: the later wins', 'pci=pcie_bus_safe root=/dev/sda pci=pcie_bus_peer2peer', { busPolicy: 'pcie_bus_peer2peer', aspm: null }],
    ['two in one pci=: the later wins', 'pci=pcie_bus_perf,pcie_bus_tune_off', { busPolicy: 'pcie_bus_tune_off', aspm: null }],
    ['matched by prefix, as pci_setup\'s strncmp', 'pci=pcie_bus_safety', { busPolicy: 'pcie_bus_safe', aspm: null }],
    ['a later pci= without a bus option keeps the earlier', 'pci=pcie_bus_perf pci=noaer', { busPolicy: 'pcie_bus_perf', aspm: null }],
    ['quoted value', 'pci="pcie_bus_perf" quiet', { busPolicy: 'pcie_bus_perf', aspm: null }],
    ['a quoted value with spaces before it', 'dyndbg="file x.c +p" pci=pcie_bus_safe', { busPolicy: 'pcie_bus_safe', aspm: null }],
    ['after -- it is init\'s', 'ro -- pci=pcie_bus_perf', none],
    ['not the pci parameter', 'xpci=pcie_bus_perf pci.pcie_bus_perf nopci=pcie_bus_safe', none],
    ['not at the option\'s start', 'pci=nopcie_bus_perf', none],
    // pcie_aspm_disable sets two flags, neither undoing the other: off (aspm_support_enabled = false) holds whatever
    // comes after it; force alone is force.
    ['pcie_aspm=off and force', 'pcie_aspm=force pcie_aspm=off', { busPolicy: null, aspm: 'off' }],
    ['pcie_aspm=off, then force: still off', 'pcie_aspm=off pcie_aspm=force', { busPolicy: null, aspm: 'off' }],
    ['pcie_aspm=force, then a value the kernel ignores', 'pcie_aspm=force pcie_aspm=on', { busPolicy: null, aspm: 'force' }],
    ['pcie_aspm= with another value is ignored by the kernel', 'pcie_aspm=on', none],
    ['pcie-aspm=off: a name\'s - is its _ to the kernel (init/main.c obsolete_checksetup parameqn)', 'ro pcie-aspm=off', { busPolicy: null, aspm: 'off' }],
    ['empty', '', none],
  ];
  for (const [name, text, want] of valid) t.same(parsePciCmdline(text), { ok: true, value: want }, name);
  for (const bad of ['ro\0pci=pcie_bus_perf', 'pci=pcie_bus_perf\u0007', 'x'.repeat(70_000)]) t.match(parsePciCmdline(bad), { ok: false, error: /not a kernel command line/ }, JSON.stringify(bad.slice(0, 24)));
});

t.test('seeded fuzzer: garbage never throws and never yields a value', async (t) => {
  const r = seeded(0x5eed0019);
  const parts = ['[', ']', 'default', 'performance', ' ', '\n', '\t', 'x', '\0', 'pci=', 'pcie_bus_', 'perf', 'safe', ',', '"', '--', '=', 'é', '\u0007', '1', '0'];
  let policies = 0;
  for (let i = 0; i < 3000; i++) {
    const text = r.join(parts, 1 + r.int(12));
    const p = parseAspmPolicy(text);
    // A value only from what the kernel could have written: lower-case words, one of them bracketed and active.
    if (p.ok) {
      policies++;
      t.ok(p.value.choices.includes(p.value.active) && text.includes(`[${p.value.active}]`) && /^[a-z [\]\n]*$/.test(text), `policy from ${JSON.stringify(text)}`);
    }
    const c = parsePciCmdline(text);
    if (c.ok && c.value.busPolicy !== null) t.ok(text.includes('pci=') && text.replace(/"/g, '').includes('pcie_bus_'), `bus policy from ${JSON.stringify(text)}`);
    // Control characters (other than tab and newline) are never a command line.
    if (/[\0\u0007]/.test(text)) t.equal(c.ok, false, `control characters refused: ${JSON.stringify(text)}`);
    const f = parseAspmFlag(text);
    if (f.ok) t.ok(/^\s*[01]\s*$/.test(text), `flag from ${JSON.stringify(text)}`);
  }
  // One-character mutations of the real texts: a value only when the mutation left a well-formed one.
  for (let i = 0; i < 3000; i++) {
    const base = r.pick([LIVE_POLICY, 'default [performance] powersave powersupersave \n', `${LIVE_CMDLINE.trim()} pci=pcie_bus_perf`]);
    const at = r.int(base.length);
    const text = base.slice(0, at) + r.pick(['', '[', ']', ' ', 'X', '\0', '"', ',', '=']) + base.slice(at + r.int(2));
    const p = parseAspmPolicy(text);
    if (p.ok) {
      policies++;
      t.ok(text.includes(`[${p.value.active}]`) && /^[a-z [\]\n]*$/.test(text), `policy from ${JSON.stringify(text)}`);
    }
    const c = parsePciCmdline(text);
    if (c.ok && c.value.busPolicy !== null) t.ok(text.replace(/"/g, '').includes(`pci=`) && text.includes(c.value.busPolicy.slice(0, 11)), `bus policy from ${JSON.stringify(text.slice(-60))}`);
    if (text.includes('\0')) t.equal(c.ok || p.ok, false, 'a NUL is never either file');
  }
  // Random bytes (no structure at all): no policy, no flag, no bus policy.
  for (let i = 0; i < 2000; i++) {
    const text = String.fromCharCode(...Array.from({ length: 1 + r.int(40) }, () => r.int(256)));
    const c = parsePciCmdline(text);
    t.ok(!parseAspmPolicy(text).ok || /^[a-z [\]\n]*$/.test(text), 'no policy from random bytes');
    t.ok(!(c.ok && c.value.busPolicy !== null), 'no bus policy from random bytes');
  }
  t.comment(`${policies} structured inputs parsed as a policy`);
});
