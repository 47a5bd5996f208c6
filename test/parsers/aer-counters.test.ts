// The kernel's AER statistics files: both label sets parse by "label, trailing integer"; garbage is an error, never 0.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type AerKind, nonZero, parseAerCounterFile, parseAerTotal, withinTotal } from '../../src/parsers/aer-counters.js';
import { aerCounterText } from '../gen/pci-regs-gen.js';
import { seeded } from '../helpers/seeded.js';

const fix = (name: string): string => readFileSync(fileURLToPath(new URL(`../fixtures/aer/${name}`, import.meta.url)), 'utf8');

t.test('real kernel formats: 4.19 (ABI sample) and 5.x on (aer.c string tables)', (t) => {
  const cases: [file: string, kind: AerKind, total: number, bits: number, nonZero: [string, number][]][] = [
    ['abi-4.19-aer_dev_correctable.txt', 'correctable', 2, 8, [['Receiver Error', 2]]],
    ['abi-4.19-aer_dev_fatal.txt', 'fatal', 0, 17, []],
    ['aer.c-6.x-aer_dev_correctable.txt', 'correctable', 7, 8, [['BadTLP', 5], ['BadDLLP', 1], ['Timeout', 3]]],
    ['aer.c-6.x-aer_dev_nonfatal.txt', 'nonfatal', 1, 18, [['CmpltTO', 1]]],
  ];
  for (const [file, kind, total, bits, nz] of cases) {
    const p = parseAerCounterFile(fix(file), kind);
    if (!t.ok(p.ok, file) || !p.ok) continue;
    t.equal(p.value.total, total, `${file}: total`);
    t.equal(p.value.bits.length, bits, `${file}: one entry per line before the total`);
    // nonZero's words, as a finding's message carries them: the bits that counted, labels kept as written.
    t.equal(nonZero(p.value), nz.map(([label, n]) => `${label} ${n}`).join(', '), `${file}: labels kept as written`);
  }
  t.end();
});

t.test('table: valid and invalid files', (t) => {
  const rows: [name: string, text: string, kind: AerKind, want: number | RegExp][] = [
    ['labels with spaces, digits and brackets', 'dev_cor_errs_bit[1] 4\nErr 2 5\nTOTAL_ERR_COR 9\n', 'correctable', 9],
    ['total only (a kernel naming no bit)', 'TOTAL_ERR_FATAL 0\n', 'fatal', 0],
    ['CRLF line ends', 'RxErr 1\r\nTOTAL_ERR_COR 1\r\n', 'correctable', 1],
    ['no trailing newline', 'RxErr 1\nTOTAL_ERR_COR 1', 'correctable', 1],
    ['empty file', '', 'correctable', /empty/],
    ['whitespace only', ' \n', 'correctable', /empty/],
    ['no total line', 'RxErr 0\nBadTLP 0\n', 'correctable', /no TOTAL_ERR_COR/],
    ["another file's total", 'DLP 0\nTOTAL_ERR_FATAL 0\n', 'nonfatal', /TOTAL_ERR_FATAL in the nonfatal file/],
    ['a line after the total', 'TOTAL_ERR_COR 0\nRxErr 3\n', 'correctable', /follows TOTAL_ERR_COR/],
    ['a negative count', 'RxErr -1\nTOTAL_ERR_COR 0\n', 'correctable', /not "label count"/],
    ['a count with a unit', 'RxErr 1k\nTOTAL_ERR_COR 1\n', 'correctable', /not "label count"/],
    ['label without a count', 'RxErr\nTOTAL_ERR_COR 0\n', 'correctable', /not "label count"/],
    ['a count beyond 2^53', 'RxErr 18446744073709551615\nTOTAL_ERR_COR 1\n', 'correctable', /beyond an exact count/],
    ['a blank line inside', 'RxErr 0\n\nTOTAL_ERR_COR 0\n', 'correctable', /line 2/],
    ['binary garbage', '\u0000\u0001\u00ff 0\nTOTAL_ERR_COR 0\n', 'correctable', /line 1/],
  ];
  for (const [name, text, kind, want] of rows) {
    const p = parseAerCounterFile(text, kind);
    if (typeof want === 'number') t.same(p.ok ? p.value.total : p.error, want, name);
    else t.match(p.ok ? 'parsed' : p.error, want, name);
  }
  // Each error adds 1 to the total and 1 to each of its bits (pci_dev_aer_stats_incr): no bit counts more than the total.
  t.same(parseAerCounterFile('Undefined 0\nDLP 3\nTOTAL_ERR_FATAL 0\n', 'fatal'), { ok: false, error: 'DLP 3 is more than the total 0: not a count the kernel keeps' }, 'a bit above the total');
  t.same(parseAerCounterFile('RxErr 2\nBadTLP 2\nTOTAL_ERR_COR 2\n', 'correctable'), { ok: true, value: { bits: [{ label: 'RxErr', count: 2 }, { label: 'BadTLP', count: 2 }], total: 2 } }, 'bits summing above the total (two bits per error) are the kernel\'s');
  t.same(parseAerTotal('0\n'), { ok: true, value: 0 }, 'root port total 0');
  t.same(parseAerTotal('12\n'), { ok: true, value: 12 }, 'root port total 12');
  for (const bad of ['', '\n', '-1\n', '1 2\n', 'x\n', '99999999999999999999\n']) t.notOk(parseAerTotal(bad).ok, `root port total ${JSON.stringify(bad)} refused`);
  t.end();
});

t.test('the generator writes what the parser reads, in both label sets', (t) => {
  const sets: Record<number, string>[] = [{ 0: 'RxErr', 6: 'BadTLP' }, { 0: 'Receiver Error', 8: 'RELAY_NUM Rollover' }];
  for (const labels of sets) {
    const p = parseAerCounterFile(aerCounterText(labels, { 0: 3 }, 'TOTAL_ERR_COR'), 'correctable');
    t.same(p.ok && p.value, { bits: Object.values(labels).map((label, i) => ({ label, count: i === 0 ? 3 : 0 })), total: 3 });
  }
  t.end();
});

t.test('fuzz (seeded): garbage never throws and never reads as 0 errors', (t) => {
  const r = seeded(0x19ae);
  const parts = ['RxErr', ' ', '\t', '0', '1', '9', 'TOTAL_ERR_COR', 'TOTAL_ERR_FATAL', '\n', '\r', '-', 'x', '\u0000', 'é', '99999999999999999999', ' 0\n', ''];
  const valid = fix('aer.c-6.x-aer_dev_correctable.txt');
  let accepted = 0;
  for (let i = 0; i < 5000; i++) {
    // Half pure garbage, half a real file with a few bytes changed.
    const text = i % 2 ? r.join(parts, r.int(24)) : [...valid].map((c) => (r.int(40) === 0 ? r.pick(parts) : c)).join('');
    let p: ReturnType<typeof parseAerCounterFile>;
    try {
      p = parseAerCounterFile(text, 'correctable');
    } catch (e) {
      t.fail(`threw on ${JSON.stringify(text)}: ${(e as Error).message}`);
      continue;
    }
    if (!p.ok) continue;
    accepted++;
    // Accepted only when the text really ends with the total line: then the value is the one printed there.
    const last = text.replace(/\r?\n$/, '').split('\n').at(-1)!.replace(/\r$/, '');
    const m = /^TOTAL_ERR_COR[ \t]+(\d+)$/.exec(last);
    if (!m || Number(m[1]) !== p.value.total) t.fail(`accepted ${JSON.stringify(text)} as total ${p.value.total}`);
    const tp = parseAerTotal(text);
    if (tp.ok && String(tp.value) !== text.replace(/\n$/, '').replace(/^0+(?=\d)/, '')) t.fail(`total accepted ${JSON.stringify(text)}`);
  }
  t.ok(accepted > 0 && accepted < 5000, `some mutated files still parse (${accepted}), most do not`);
  t.end();
});

/** The parser as it was first written (a lazy label pattern, line by line): the reference the faster one must equal. */
function reference(text: string, kind: AerKind): ReturnType<typeof parseAerCounterFile> {
  const LINE = /^([\x21-\x7e][\x20-\x7e]{0,63}?)[ \t]+(\d{1,20})$/;
  const want = { correctable: 'TOTAL_ERR_COR', nonfatal: 'TOTAL_ERR_NONFATAL', fatal: 'TOTAL_ERR_FATAL' }[kind];
  const show = (s: string): string => JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
  const lines = text.replace(/\n$/, '').split('\n');
  if (text.trim() === '') return { ok: false, error: `empty (no ${want} line)` };
  if (lines.length > 40) return { ok: false, error: `${lines.length} lines: not an AER statistics file` };
  const bits: { label: string; count: number }[] = [];
  let total: number | null = null;
  for (const [i, raw] of lines.entries()) {
    const line = raw.replace(/\r$/, '');
    const m = LINE.exec(line);
    if (!m) return { ok: false, error: `line ${i + 1} is not "label count": ${show(line)}` };
    const label = m[1]!;
    const n = Number(m[2]!);
    if (!Number.isSafeInteger(n)) return { ok: false, error: `${label}: ${m[2]!} is beyond an exact count` };
    if (total !== null) return { ok: false, error: `line ${i + 1} follows ${want}: ${show(line)}` };
    if (label.startsWith('TOTAL_ERR_')) {
      if (label !== want) return { ok: false, error: `${label} in the ${kind} file (want ${want})` };
      total = n;
    } else bits.push({ label, count: n });
  }
  if (total === null) return { ok: false, error: `no ${want} line` };
  // Since first written: a bit counting more than the total is refused (withinTotal), after the same reading.
  return withinTotal({ bits, total });
}

t.test('differential (seeded): the parser answers exactly as its first, lazy-pattern version did, on the fuzzer inputs and edge lines', (t) => {
  const r = seeded(0x19ae);
  const parts = ['RxErr', ' ', '\t', '0', '1', '9', 'TOTAL_ERR_COR', 'TOTAL_ERR_FATAL', '\n', '\r', '-', 'x', '\u0000', 'é', '99999999999999999999', ' 0\n', ''];
  const valid = fix('aer.c-6.x-aer_dev_correctable.txt');
  const texts = new Set<string>();
  for (let i = 0; i < 5000; i++) texts.add(i % 2 ? r.join(parts, r.int(24)) : [...valid].map((c) => (r.int(40) === 0 ? r.pick(parts) : c)).join(''));
  // Labels around the 64-character limit, blanks inside and at the ends, digit runs around 20, line ends, line counts.
  const long = (n: number): string => 'L'.repeat(n);
  const labels = [long(63), long(64), long(65), `${long(62)} x`, `${long(63)} `, ' RxErr', '\tRxErr', '~', '!', 'a\tb', 'a b', 'a 1', `x ${'9'.repeat(20)}`, `${long(64)}1`, 'TOTAL_ERR_COR', 'TOTAL_ERR_CORX', '\u007f', 'é'];
  const counts = [' 1', '\t\t7', `  ${'1'.repeat(20)}`, ` ${'2'.repeat(21)}`, ' 9007199254740993', '', ' -1', '1'];
  for (const l of labels) for (const c of counts) for (const end of ['\n', '\r\n', '', '\n\n', '\r\r\n']) {
    texts.add(`${l}${c}${end}TOTAL_ERR_COR 0\n`);
    texts.add(`RxErr 0\n${l}${c}${end}`);
  }
  for (const n of [38, 39, 40, 41]) texts.add(`${'RxErr 0\n'.repeat(n)}TOTAL_ERR_COR 3\n`);
  for (let i = 0; i < 3000; i++) texts.add(Array.from({ length: r.int(60) }, () => r.pick([' ', '\t', '0', '7', 'a', 'Z', '~', '\r', '\n', '\u007f', 'TOTAL_ERR_COR ', 'TOTAL_ERR_FATAL ', long(r.int(70))])).join(''));
  let differ = 0;
  let accepted = 0;
  for (const text of texts)
    for (const kind of ['correctable', 'fatal'] as const) {
      const want = reference(text, kind);
      const got = parseAerCounterFile(text, kind);
      if (want.ok) accepted++;
      if (JSON.stringify(got) !== JSON.stringify(want) && differ++ < 10) t.fail(`${JSON.stringify(text)} (${kind}): ${JSON.stringify(got)}, first version ${JSON.stringify(want)}`);
    }
  t.equal(differ, 0, `${texts.size} texts, each as two kinds of file: ${accepted} accepted, every answer and error alike`);
  t.ok(accepted > 200 && accepted < texts.size, 'accepted and refused files were both compared');
  t.end();
});
