// Refuses files the gate must trust (config, baseline, scontrol, its own directories) when anyone but root could
// change what their path leads to. The path is resolved the kernel's way, one component at a time, and every object
// the resolution touches is judged: each directory a name is looked up in (one holding a symbolic link included:
// whoever can write there can swap the link), each link in a shared sticky directory, and the file itself. Each must
// be owned by root (or the running user) and not writable by group or others; a sticky directory others may write
// (/tmp) is fine when the entry below it is root's (sshd's StrictModes). Resolving once and judging only the target
// left a link in a user's directory free to point elsewhere between the check and the read.
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../errors.js';

/** Links followed before the walk gives up (the kernel's own limit for one lookup). */
const MAX_LINKS = 40;

const mine = (st: fs.Stats, uid: number): boolean => st.uid === uid || st.uid === 0;
/** A directory others may write in, where only the sticky bit keeps them from our entries. */
const sharedSticky = (st: fs.Stats): boolean => st.isDirectory() && (st.mode & 0o022) !== 0 && (st.mode & 0o1000) !== 0;

function judge(p: string, st: fs.Stats, uid: number, via: string): string | null {
  if (!mine(st, uid)) return `${p} is owned by uid ${st.uid}, not root${via}`;
  if (st.mode & 0o022 && !sharedSticky(st)) return `${p} is writable by ${st.mode & 0o002 ? 'anyone' : 'its group'} (mode ${(st.mode & 0o7777).toString(8)})${via}`;
  return null;
}

/**
 * `p` made absolute without normalising it: `link/..` is the parent of where the link leads, which only the walk can
 * tell (path.resolve would take it away as text and judge another file than the kernel reads).
 */
export const absolute = (p: string): string => (p.startsWith('/') ? p : `${process.cwd()}/${p}`);

/**
 * Why someone other than root or `uid` could change what `file` leads to, or null when nobody can. The walk lstats
 * each component once (a link's target is walked the same way), so nothing is judged but what a read would reach.
 * `absent`: a name missing on the way is no reason (null) once the directory it is missing from was judged: only
 * whoever may write there could make it (a file the gate reads where it may be absent, as Slurm's gres.conf).
 */
export function untrustedReason(file: string, uid = 0, o: { readonly absent?: boolean } = {}): string | null {
  const given = absolute(file);
  const via = (p: string): string => (p === given ? '' : ` (on the way to ${file})`);
  const todo = given.split('/').filter(Boolean);
  let links = 0;
  try {
    const top = fs.lstatSync('/');
    let cur = '/';
    let at = top;
    // A directory is judged when a name is looked up in it (whoever can write there can swap that entry), once; one
    // only left by `..` decides nothing (its `..` is fixed).
    const judged = new Set<string>();
    while (todo.length > 0) {
      const name = todo.shift()!;
      if (name === '.') continue;
      if (name === '..') {
        cur = path.dirname(cur); // cur holds no link: its parent is the real one
        at = fs.lstatSync(cur);
        continue;
      }
      if (!judged.has(cur)) {
        judged.add(cur);
        const why = judge(cur, at, uid, via(cur));
        if (why) return why;
      }
      const next = cur === '/' ? `/${name}` : `${cur}/${name}`;
      const st = fs.lstatSync(next);
      if (sharedSticky(at) && !mine(st, uid)) return `${next} sits in a shared sticky directory and is not root's${via(next)}`;
      if (st.isSymbolicLink()) {
        if (++links > MAX_LINKS) return `${file}: more than ${MAX_LINKS} symbolic links to follow`;
        const target = fs.readlinkSync(next);
        if (target.startsWith('/')) [cur, at] = ['/', top];
        todo.unshift(...target.split('/').filter(Boolean));
        continue;
      }
      if (todo.length > 0 && !st.isDirectory()) return `${file}: ${next} is not a directory`;
      [cur, at] = [next, st];
    }
    return judge(cur, at, uid, via(cur)); // what the path leads to
  } catch (e) {
    // Only lstat of a name after its directory was judged (or of / and a `..`, which are there) answers ENOENT.
    if (o.absent && (e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return `${file}: ${(e as Error).message}`;
  }
}

/**
 * The one trust gate for every command that runs as root and acts on Slurm or writes state (prolog, health, epilog,
 * resume, drill, agent): each file must be changeable by root (or the running user) only.
 */
export function requireTrusted(files: readonly string[], uid = process.getuid?.() ?? 0): void {
  for (const f of files) {
    const why = untrustedReason(f, uid);
    if (why) throw new ConfigError(`refusing ${f}: ${why}`);
  }
}
