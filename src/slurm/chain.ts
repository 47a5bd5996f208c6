// The text of a chain wrapper: where slurm.conf takes one script for a hook (Prolog/Epilog before 24.05, TaskProlog
// and HealthCheckProgram in every release), one small sh script the admin installs runs the site's script(s), then
// gdrgate's, and keeps Slurm's meaning of the exit code. Slurm starts it with no arguments and no PATH
// (prep_script_slurmd.c, run_command.c), so every path is absolute and nothing is looked up.

export type Hook = 'prolog' | 'epilog' | 'taskprolog' | 'health';

/** Characters a path may hold to be written into the wrapper as it is; a glob adds * ? [ ]. */
const PLAIN = /^[A-Za-z0-9_./+,:@%=-]+$/;
const GLOB = /^[A-Za-z0-9_./+,:@%=*?[\]-]+$/;

const isGlob = (s: string): boolean => /[*?[]/.test(s);

/** Why `site` cannot be chained by a generated wrapper, or null. */
export function unchainable(site: string): string | null {
  if (!site.startsWith('/')) return `${site} is not an absolute path (the wrapper needs one)`;
  if (/[\x00-\x1f\x7f]/.test(site)) return `${JSON.stringify(site)} holds control characters`;
  if (isGlob(site) && !GLOB.test(site)) return `the glob ${site} holds characters other than letters, digits and ./_+,:@%=-*?[] (it must stay unquoted)`;
  return null;
}

/** A plain path as one sh word: as it is when it can be, else in single quotes. */
const word = (s: string): string => (PLAIN.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/**
 * The lines that run one site value: a plain path, or a glob as Slurm expands it (glob(3), then list_push: the
 * matches run in reverse order, z-a, Z-A, 9-0, and the first failure stops the rest).
 */
function runSite(site: string, onFail: 'exit' | 'remember'): string[] {
  const fail = onFail === 'exit' ? 'exit "$rc"' : 'site=$rc';
  if (!isGlob(site)) return [word(site), `rc=$?`, `[ "$rc" -eq 0 ] || ${fail}`];
  return [
    `# Slurm expands this glob itself and runs the matches in reverse order (z-a, Z-A, 9-0); the first failure ends them.`,
    `set -- ${site}`,
    `i=$#`,
    `while [ "$i" -gt 0 ]; do`,
    `  eval "s=\\\${$i}"`,
    `  i=$((i - 1))`,
    `  [ -e "$s" ] || continue`,
    `  "$s"`,
    `  rc=$?`,
    `  [ "$rc" -eq 0 ] || { ${fail}; break; }`,
    `done`,
  ];
}

const ABOUT: Record<Hook, string[]> = {
  prolog: [
    '# The site\'s Prolog first, then gdrgate\'s. A failure ends the chain with its exit code: Slurm drains the node',
    '# ("Prolog error") and requeues the job either way, so gdrgate does not run after a failed site Prolog.',
  ],
  epilog: [
    '# The site\'s Epilog first, then gdrgate\'s, which always runs (it removes the job\'s gdrgate state). The exit',
    '# code is the site\'s when it failed, else gdrgate\'s: non-zero drains the node ("Epilog error").',
  ],
  taskprolog: [
    '# The site\'s TaskProlog first, then gdrgate\'s, as the job\'s user. Both write TaskProlog lines (export, unset,',
    '# print) to stdout, which slurmstepd reads in order. A failure ends the chain with its exit code (the task fails).',
  ],
  health: [
    '# The site\'s HealthCheckProgram (NHC or other) first, then gdrgate\'s; both run, each drains with its own reason.',
    '# slurmd ignores the exit code; the first non-zero one is kept for the log. Both must end within slurmd\'s 60 s.',
  ],
};

const NAME: Record<Hook, string> = { prolog: 'Prolog', epilog: 'Epilog', taskprolog: 'TaskProlog', health: 'HealthCheckProgram' };

/** The wrapper's text: `sites` are the site's values for the hook, in the order Slurm would run them. */
export function chainText(hook: Hook, sites: readonly string[], ours: string, release: string): string {
  for (const s of sites) {
    const why = unchainable(s);
    if (why) throw new Error(why);
  }
  const head = [
    '#!/bin/sh',
    `# ${NAME[hook]} chain written by \`gdrgate slurm-config\` for Slurm ${release}: slurm.conf keeps one ${NAME[hook]}=,`,
    '# so this one script runs both. Install it on every node (root:root, mode 0755); gdrgate never edits slurm.conf.',
    ...ABOUT[hook],
  ];
  const keepGoing = hook === 'epilog' || hook === 'health';
  const body: string[] = keepGoing ? ['site=0'] : [];
  for (const s of sites) body.push(...runSite(s, keepGoing ? 'remember' : 'exit'));
  if (keepGoing) body.push(word(ours), 'rc=$?', '[ "$site" -eq 0 ] || exit "$site"', 'exit "$rc"');
  else body.push(`exec ${word(ours)}`);
  return [...head, ...body, ''].join('\n');
}
