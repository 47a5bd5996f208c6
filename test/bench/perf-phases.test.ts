// bench/perf-phases.mjs on real recordings: the 80 `perf record -g` runs of the installed package on the live H200
// (test/fixtures/device-h200-live/package-2026-12-04c/phases.tar.xz, a stripped Node and a stripped ld.so among them)
// sort into the phases that fixture's README quotes, to the tenth of a millisecond, and every sample lands somewhere.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';
import { scratchDir } from '../helpers/scratch.js';

const FIXTURE = path.join(REPO, 'test/fixtures/device-h200-live/package-2026-12-04c');
const { phases } = (await import(path.join(REPO, 'bench/perf-phases.mjs'))) as { phases: (texts: string[]) => Map<string, number> };

const dir = scratchDir('gdrgate-phases-');
const untar = spawnSync('/usr/bin/tar', ['-C', dir, '-xJf', path.join(FIXTURE, 'phases.tar.xz')], { encoding: 'utf8' });
t.equal(untar.status, 0, untar.stderr);

/** Per run, to the tenth of a ms, as the script prints it. */
function perRun(name: string): Record<string, string> {
  const d = path.join(dir, 'phases', name);
  const files = readdirSync(d).filter((f) => f.endsWith('.txt'));
  const total = phases(files.map((f) => readFileSync(path.join(d, f), 'utf8')));
  const out: Record<string, string> = {};
  let all = 0;
  for (const [k, v] of total) {
    out[k] = (v / files.length).toFixed(1);
    all += v;
  }
  out.all = (all / files.length).toFixed(1);
  return out;
}

t.test('the Prolog from the blob, as the README has it', async (t) => {
  const p = perRun('prolog-blob');
  t.same(
    { ...p },
    {
      'dynamic loader': '1.9',
      'per-process init (V8, OpenSSL, ICU)': '5.3',
      'snapshot: read the file': '9.4',
      'snapshot: parse and copy': '7.0',
      'isolate: deserialize': '24.6',
      'context: deserialize': '12.3',
      'JS: run': '17.9',
      'JS: compile': '0.3',
      'JS: kernel (syscalls, page faults)': '3.3',
      exit: '0.0',
      'other threads (V8 platform, libuv)': '3.0',
      all: '85.0',
    },
  );
});

t.test('node -e 0 reads no snapshot file, and nothing is left unsorted in any of the four', async (t) => {
  const n = perRun('node-e0');
  t.same([n['isolate: deserialize'], n['context: deserialize'], n['per-process init (V8, OpenSSL, ICU)'], n['dynamic loader'], n.all], ['16.2', '7.2', '5.9', '1.9', '36.7']);
  t.equal(n['snapshot: read the file'], undefined, 'no snapshot file');
  for (const name of ['node-e0', 'empty-snapshot', 'blob-version', 'prolog-blob']) t.equal(perRun(name)['before any phase'], undefined, `${name}: every sample in a phase`);
  t.same([perRun('empty-snapshot')['snapshot: read the file'], perRun('blob-version')['snapshot: read the file']], ['6.1', '9.5']);
});
