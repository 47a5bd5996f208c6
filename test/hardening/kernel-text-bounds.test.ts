// Generator: every kernel text file the inventory reads on a real tree (the H200 capture; a generated GH200 with a ConnectX-7, as GH200 nodes list them), one of each shape, grown just past the most the kernel writes there: the read fails as no kernel file, and the judgement keeps each finding or makes it a skip. (Each Host's own bound: test/host/read-text-hosts.test.ts.)
import t from 'tap';
import { cpSync } from 'node:fs';
import path from 'node:path';
import { CHECK_IDS } from '../../src/checks/index.js';
import { Unreadable } from '../../src/errors.js';
import { FsHost } from '../../src/host/fs-host.js';
import { type AccessAnswer, type Host, type ReadResult, type StatInfo, TEXT_MAX, wholeText } from '../../src/host/host.js';
import { buildInventory } from '../../src/inventory/build.js';
import type { Finding } from '../../src/model/finding.js';
import { runChecks } from '../../src/runner/run.js';
import { MemoHost } from '../../src/snapshot/memo.js';
import { buildTree } from '../gen/sysfs-tree.js';
import { node as GH200 } from '../gen/topologies/gh200-cx7.js';
import { CountingHost } from '../helpers/counting-host.js';
import { H200 } from '../helpers/paths.js';
import { scratchDir, TREE_TMP } from '../helpers/scratch.js';
import { shapeOf } from './_mutate.js';

const PAGE = 64 << 10;
/**
 * The kernel's bound on each text file, as the kernel states it (null: none far below the 16 MiB every text has).
 * fs/sysfs/file.c sysfs_kf_seq_show: a text attribute's show() fills one page (64 KiB on arm64's largest pages).
 * One record each: /proc/cmdline (COMMAND_LINE_SIZE), /proc/version and sysctl strings, fs/proc/base.c's status
 * and comm, the NVIDIA driver's few lines. kernel/module/procfs.c: a line per loaded module. (<pid>/limits: a row
 * the gate does not know is passed over, memlock still judged: hostile-lines.test.ts.)
 */
function kernelBound(file: string): number | null {
  if (file.startsWith('/sys/')) return PAGE;
  if (/^\/proc\/(?:cmdline|version|sys\/kernel\/.+|(?:self|\d+)\/(?:status|comm)|driver\/nvidia\/(?:version|params|gpus\/[^/]+\/information))$/.test(file)) return PAGE;
  if (file === '/proc/modules') return 1 << 20;
  return null;
}

/** Records the paths read as text (readText), apart from the byte reads (config space, VPD). */
class TextReads extends CountingHost {
  readonly texts: string[] = [];
  constructor(private readonly base: Host) {
    super(base);
  }
  override readText(p: string): Promise<ReadResult<string>> {
    this.texts.push(p);
    return this.base.readText(p);
  }
}

/** What a verdict is about: a pass, warn, fail or error must come back with the same key as the healthy run's, or become a skip. */
const key = (f: Finding): string => JSON.stringify([f.check, f.subject, f.code, f.status, f.expected ?? null]);

function judge(inv: Awaited<ReturnType<typeof buildInventory>>): Finding[] {
  try {
    return runChecks({ inv, baseline: null, node: null }, CHECK_IDS);
  } catch (e) {
    if (e instanceof Unreadable) return []; // the node not judged at all: could not tell
    throw e;
  }
}

/** The text repeated (newline-ended, as the kernel ends it) until it is one line past `bound`. */
function grown(text: string, bound: number): Buffer {
  const unit = text === '' ? '0\n' : text.endsWith('\n') ? text : `${text}\n`;
  return Buffer.from(unit.repeat(Math.floor(bound / unit.length) + 1), 'latin1');
}

/**
 * The tree as read once (MemoHost: every later inventory from memory), one file grown. Read as every Host but the
 * live one reads a text (a snapshot, a recording, a drill: readBytes of the largest text, then host.ts wholeText).
 */
class Grown implements Host {
  readonly root: string;
  constructor(private readonly base: MemoHost, private readonly file: string, private readonly data: Buffer) {
    this.root = base.root;
  }
  async readBytes(p: string, max = 1 << 20): Promise<ReadResult<Uint8Array>> {
    return p === this.file ? { ok: true, value: this.data.subarray(0, max) } : this.base.readBytes(p, max);
  }
  async readText(p: string): Promise<ReadResult<string>> {
    return p === this.file ? wholeText(await this.readBytes(p, TEXT_MAX + 1), p) : this.base.readText(p);
  }
  list(p: string): Promise<ReadResult<string[]>> { return this.base.list(p); }
  readLink(p: string): Promise<ReadResult<string>> { return this.base.readLink(p); }
  realPath(p: string): Promise<ReadResult<string>> { return this.base.realPath(p); }
  lstat(p: string): Promise<ReadResult<StatInfo>> { return this.base.lstat(p); }
  stat(p: string): Promise<ReadResult<StatInfo>> { return this.base.stat(p); }
  access(p: string): Promise<AccessAnswer> { return this.base.access(p); }
  untrusted(p: string): string | null { return this.base.untrusted(p); }
}

async function trees(): Promise<[string, string][]> {
  const h200 = path.join(scratchDir('gdrgate-ktext-', TREE_TMP), 'tree');
  cpSync(H200, h200, { recursive: true, verbatimSymlinks: true });
  const gh200 = scratchDir('gdrgate-ktext-', TREE_TMP);
  await buildTree(gh200, GH200);
  return [['H200 capture', h200], ['GH200, ConnectX-7', gh200]];
}

for (const [name, root] of await trees()) {
  t.test(name, async (t) => {
    const memo = new MemoHost(new FsHost(root));
    const rec = new TextReads(memo);
    const healthy = new Set(judge(await buildInventory(rec)).map(key));
    const seen = new Set<string>();
    const files: [string, string][] = [];
    for (const f of new Set(rec.texts)) {
      const r = await memo.readText(f);
      if (!r.ok || kernelBound(f) === null || seen.has(shapeOf(f))) continue;
      seen.add(shapeOf(f));
      files.push([f, r.value]);
    }
    t.ok(files.length >= 10, `${files.length} shapes of kernel text file read`);
    for (const [file, text] of files) {
      const bound = kernelBound(file)!;
      const host = new Grown(memo, file, grown(text, bound));
      const size = `${bound >= 1 << 20 ? `${bound >> 20} MiB` : `${bound >> 10} KiB`}`;
      t.same(await host.readText(file), { ok: false, missing: false, reason: `${file}: larger than ${size} (more than the kernel writes there), not read` }, `${file}: not read`);
      const moved = judge(await buildInventory(host)).filter((f) => f.status !== 'skip' && !healthy.has(key(f)));
      t.same(moved.map(key), [], `${file}: no verdict from it`);
    }
  });
}
