// Where a short Node process's CPU time goes, by phase of its start: node bench/perf-phases.mjs DIR... where each DIR
// holds the `perf script` text (one file a run) of `perf record -g` runs of one command (bench/phases.sh and
// scripts/device-phases.sh make them). Prints, per DIR, each phase's CPU time per run, from the main thread's stacks:
// the kernel's exec, the dynamic loader, Node's per-process init, a startup snapshot's file read and parse, the
// isolate's and the context's deserializing, the program's JavaScript (run, compile, GC, and the kernel under it),
// exit; and the other threads'. A stack cut short (libc is built without frame pointers, so perf cannot walk out of
// a read() or malloc()) is counted to the phase the process was in, the last one seen before it: the phases follow
// one another in time. Samples are weighted by their period, so the figures are CPU ms whatever perf's frequency.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** Outermost first: a stack is in the first phase one of its frames names. */
const PHASES = [
  ['exec (kernel)', /bprm_execve|load_elf_binary|begin_new_exec/],
  ['exit', /__run_exit_handlers|\bexit\b|do_exit|do_group_exit|FreeEnvironment|Isolate::Dispose|DisposePlatform|TearDown/],
  // Also by its parts, for a Node whose InitializeOncePerProcess is not in its symbols (the package's stripped one).
  ['per-process init (V8, OpenSSL, ICU)', /InitializeOncePerProcess|__libc_csu_init|OPENSSL_init|ncrypto::CSPRNG|V8::Initialize\b|NodePlatform::NodePlatform|tracing::Agent/],
  ['snapshot: parse and copy', /SnapshotData::FromBlob/],
  ['snapshot: read the file', /SnapshotData::FromFile/],
  ['isolate: deserialize', /node::NewIsolate|NodeMainInstance::NodeMainInstance/],
  ['context: deserialize', /CreateMainEnvironment/],
  ['JS: garbage collection', /Heap::CollectGarbage|ScavengerCollector|MarkCompactCollector|Heap::PerformGarbageCollection/],
  ['JS: compile', /Compiler::Compile|Parser::Parse|ParseProgram|ParseFunction|BytecodeGenerator|maglev::|baseline::|compiler::Pipeline/],
  ['JS: run', /LoadEnvironment|SpinEventLoop|StartExecution|uv_run|Builtins_|JSEntry/],
];
const LOADER = /ld-linux|\b_dl_start\b|\b_dl_start_user\b/;
const KERNEL = /entry_SYSCALL|asm_exc_page_fault|\[kernel\.kallsyms\]/;
const OTHER_THREADS = 'other threads (V8 platform, libuv)';

/** CPU ms per phase, summed over the runs in `files`, and the number of runs. */
export function phases(texts) {
  const total = new Map();
  for (const text of texts) {
    let main = null;
    let last = null;
    for (const block of text.split('\n\n')) {
      const lines = block.trim().split('\n');
      const head = /^(\S+)\s+(\d+)\s+[\d.]+:\s+(\d+)\s/.exec(lines[0] ?? '');
      if (!head) continue;
      const tid = head[2];
      const ms = Number(head[3]) / 1e6;
      main ??= tid;
      const frames = lines.slice(1).map((l) => l.trim()).reverse();
      let phase;
      if (tid !== main) phase = OTHER_THREADS;
      else {
        // The loader runs before main: its stacks start in it (a stripped ld.so has no names, only its file).
        if (LOADER.test(frames[0] ?? '')) phase = 'dynamic loader';
        else phase = PHASES.find(([, re]) => frames.some((f) => re.test(f)))?.[0] ?? null;
        // In node::Start before any later phase: the per-process init.
        if (phase === null && (last === null || last === 'dynamic loader') && frames.some((f) => /node::Start\b/.test(f))) phase = 'per-process init (V8, OpenSSL, ICU)';
        if (phase === null) phase = last ?? 'before any phase';
        else last = phase.startsWith('JS: ') ? 'JS: run' : phase;
        if (phase === 'JS: run' && frames.some((f) => KERNEL.test(f))) phase = 'JS: kernel (syscalls, page faults)';
      }
      total.set(phase, (total.get(phase) ?? 0) + ms);
    }
  }
  return total;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const dir of process.argv.slice(2)) {
    const files = readdirSync(dir).filter((f) => f.endsWith('.txt'));
    const total = phases(files.map((f) => readFileSync(path.join(dir, f), 'utf8')));
    let sum = 0;
    for (const v of total.values()) sum += v;
    console.log(`== ${dir}: ${files.length} runs, CPU ms per run`);
    for (const [k, v] of [...total].sort((a, b) => b[1] - a[1])) console.log(`${(v / files.length).toFixed(1).padStart(7)}  ${((100 * v) / sum).toFixed(0).padStart(3)}%  ${k}`);
    console.log(`${(sum / files.length).toFixed(1).padStart(7)}        all`);
  }
}
