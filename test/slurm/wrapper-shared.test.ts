// slurm/*.sh each carry their own copies of rootonly(), say() and verdict() (and prolog.sh and epilog.sh of the hard
// bound's reading): nothing may be sourced before its trust is checked,
// and that check is rootonly itself (and sourcing a shared file would cost each Prolog a /usr/bin/stat). The copies
// must stay one text: a fix to one wrapper's trust check or system-log line that missed another would be a hole.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/paths.js';

const WRAPPERS = ['prolog', 'epilog', 'taskprolog'] as const;

/** The text of `name() { … }` in a script: from its line to the first line that is `}` alone, with the comment above. */
function fn(script: string, name: string): string | null {
  const lines = script.split('\n');
  const start = lines.findIndex((l) => l === `${name}() {`);
  if (start < 0) return null;
  const end = lines.findIndex((l, i) => i > start && l === '}');
  let head = start;
  while (head > 0 && lines[head - 1]!.startsWith('# ')) head--;
  return end < 0 ? null : lines.slice(head, end + 1).join('\n');
}

const text = Object.fromEntries(WRAPPERS.map((w) => [w, readFileSync(path.join(REPO, `slurm/${w}.sh`), 'utf8')])) as Record<(typeof WRAPPERS)[number], string>;

for (const name of ['rootonly', 'say']) {
  t.test(`${name}(): one text in every wrapper`, async (t) => {
    const found = WRAPPERS.map((w) => fn(text[w], name));
    t.equal(found.filter((f) => f === null).length, 0, `every wrapper defines ${name}()`);
    // Comments differ where a wrapper's reader differs (the TaskProlog's stderr is slurmstepd's): the code must not.
    const body = (f: string | null): string => (f ?? '').split('\n').filter((l) => !/^\s*#/.test(l)).join('\n');
    t.same(WRAPPERS.map((w, i) => [w, body(found[i]!)]), WRAPPERS.map((w) => [w, body(found[0]!)]));
  });
}

t.test("verdict(): one line in every wrapper (an exit code is gdrgate's verdict only when it wrote it)", async (t) => {
  const line = (w: (typeof WRAPPERS)[number]): string[] => text[w].split('\n').filter((l) => l.startsWith('verdict() {'));
  const found = WRAPPERS.map((w) => [w, line(w)]);
  t.same(found, WRAPPERS.map((w) => [w, line('prolog')]));
  t.equal(line('prolog').length, 1);
});

t.test("the verdict pipe's opening: one text in prolog.sh and epilog.sh (taskprolog.sh opens it in judge(), by $BASHPID)", async (t) => {
  const opening = (w: (typeof WRAPPERS)[number]): string | null => {
    const m = /\nvfd= drained=\nunset GDRGATE_VERDICT_FD\n[\s\S]*?&& export GDRGATE_VERDICT_FD\n/.exec(text[w]);
    return m ? m[0] : null;
  };
  t.not(opening('prolog'), null, 'prolog.sh opens it');
  t.equal(opening('epilog'), opening('prolog'));
});

t.test("the hard bound: its reading of HARD_TIMEOUT and of the uptime one text in every wrapper, bound() and the kill's test too", async (t) => {
  const block = (w: (typeof WRAPPERS)[number]): string | null => {
    const m = /\nHARD_TIMEOUT=\$\{HARD_TIMEOUT#[\s\S]*?\nupcs\(\) \{[^\n]*\n/.exec(text[w]);
    return m ? m[0] : null;
  };
  t.not(block('prolog'), null, 'prolog.sh has it');
  t.same(WRAPPERS.map((w) => [w, block(w)]), WRAPPERS.map((w) => [w, block('prolog')]));
  // Each wrapper's malformed value falls back to its own default, the one it sets.
  const defaults = (w: (typeof WRAPPERS)[number]): string[] => {
    const set = /\nHARD_TIMEOUT=(\d+)\n/.exec(text[w]);
    const bad = /\ncase "\$HARD_TIMEOUT" in ''\) HARD_TIMEOUT=0 ;; \*\[!0-9\]\*\) HARD_TIMEOUT=(\d+) ;; esac\n/.exec(text[w]);
    return [set?.[1] ?? '', bad?.[1] ?? ''];
  };
  t.same(WRAPPERS.map((w) => [w, defaults(w)]), [['prolog', ['45', '45']], ['epilog', ['55', '55']], ['taskprolog', ['15', '15']]]);
  // bound() (prolog.sh's over three lines, taskprolog.sh's on one) and the test of a kill at the bound.
  const flat = (f: string | null): string => {
    const body = (f ?? '').split('\n').filter((l) => !/^\s*#/.test(l)).map((l) => l.trim());
    return `${body[0]} ${body.slice(1, -1).join('; ')}; ${body.at(-1)}`;
  };
  const oneLine = (w: (typeof WRAPPERS)[number]): string | null => text[w].split('\n').find((l) => l.startsWith('bound() {')) ?? null;
  t.equal(oneLine('taskprolog'), flat(fn(text.prolog, 'bound')));
  const kill = '[ "$1" = 137 ] && [ "${#hard[@]}" -gt 0 ] && upcs && ((REPLY - b0 >= bl - 5))';
  t.same(['prolog', 'taskprolog'].map((w) => [w, text[w as 'prolog'].split(kill).length - 1]), [['prolog', 1], ['taskprolog', 1]]);
  // The agent's path (the hot one) pays nothing for the bound: no uptime read before the agent's block ends.
  const agentEnd = text.prolog.indexOf('\n# gdrgate\'s exit code (0-3) is its verdict only when gdrgate says so');
  t.equal(agentEnd > 0, true, "the agent's block is there");
  t.equal(text.prolog.slice(0, agentEnd).includes('/proc/uptime'), false, 'no /proc/uptime before the agent is asked and answers');
  // Nor the TaskProlog's tasks answered from a kept answer or by the agent: the uptime is read only where Node starts.
  const judge = fn(text.taskprolog, 'judge') ?? '';
  const outside = text.taskprolog.replace(judge, '').split('\n').filter((l) => /(^\s*|[;&|{]\s*)(upcs|bound)\b(?!\(\))/.test(l) && !/^(upcs|bound|stopped)\(\) \{/.test(l));
  t.same(outside, []);
});

// slurmd shows a passing Prolog's or Epilog's output to nobody: a line a wrapper writes to stderr goes through say(),
// which puts it in the system log too. The TaskProlog's two exceptions: the agent's reason (the agent logs it) and a
// settings file's, said by local task 0 only.
t.test('no wrapper writes to stderr but through say()', async (t) => {
  const direct = (w: (typeof WRAPPERS)[number]): string[] =>
    text[w].split('\n').filter((l) => l.includes('>&2') && l !== `  printf '%s\\n' "$2" >&2`);
  t.same(WRAPPERS.map((w) => [w, direct(w).length]), [['prolog', 0], ['epilog', 0], ['taskprolog', 2]]);
});

t.test('each wrapper is bash (the verdict pipe and say() use bash alone) and sets LOGGER before it reads a .conf', async (t) => {
  for (const w of WRAPPERS) {
    // The TaskProlog runs in the job's environment: privileged mode, so bash takes no BASH_ENV, SHELLOPTS, GLOBIGNORE
    // or function from it (a job's BASH_ENV printed `export LD_PRELOAD=…` before the script's first line).
    t.equal(text[w].split('\n')[0], w === 'taskprolog' ? '#!/bin/bash -p' : '#!/bin/bash', `${w}.sh`);
    const logger = text[w].indexOf('\nLOGGER=/usr/bin/logger\n');
    const conf = text[w].indexOf('for gdrgate_conf in');
    t.ok(logger > 0 && logger < conf, `${w}.sh: LOGGER=/usr/bin/logger before the settings files`);
  }
});
