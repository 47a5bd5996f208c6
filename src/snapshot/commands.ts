// The command outputs an admin attaches to a ticket (live root only), and the /dev nodes listed — never opened.
import type { Exec } from '../host/exec.js';
import type { Host } from '../host/host.js';

export interface CommandSpec {
  /** File stem under capture/cmd/ (nvidia-smi_topo_m.txt, as the bundled capture names them). */
  readonly name: string;
  readonly tool: string;
  readonly args: readonly string[];
}

export const COMMANDS: readonly CommandSpec[] = [
  { name: 'nvidia-smi_topo_m', tool: 'nvidia-smi', args: ['topo', '-m'] },
  { name: 'nvidia-smi_q', tool: 'nvidia-smi', args: ['-q'] },
  { name: 'ibv_devinfo_v', tool: 'ibv_devinfo', args: ['-v'] },
  { name: 'lspci_tv', tool: 'lspci', args: ['-tv'] },
  { name: 'lspci_vvv', tool: 'lspci', args: ['-vvv'] },
];

/** Where distributions install these (lspci in /usr/sbin on some, /usr/bin on others; the GPU operator's driver
 * container in /usr/local/nvidia/bin); never $PATH. */
const BIN_DIRS = ['/usr/bin', '/usr/sbin', '/bin', '/sbin', '/usr/local/nvidia/bin'];
export const COMMAND_TIMEOUT_MS = 10_000;

export interface CommandRecord {
  readonly name: string;
  /** Absolute path and arguments as run; the path is null when the tool is not installed. */
  readonly argv: readonly string[] | null;
  readonly status: 'exited' | 'missing' | 'timeout' | 'error';
  readonly exitCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  readonly stdoutBytes: number;
  readonly stderrBytes: number;
}

export interface CommandOutput {
  readonly record: CommandRecord;
  readonly files: ReadonlyArray<readonly [name: string, text: string]>;
}

async function locate(host: Host, tool: string): Promise<string | null> {
  for (const d of BIN_DIRS) {
    const st = await host.stat(`${d}/${tool}`);
    if (st.ok && st.value.kind === 'file' && st.value.mode & 0o111) return `${d}/${tool}`;
  }
  return null;
}

/** Runs every command at once, each with its own timeout, a fixed PATH and locale, and no other environment. */
export async function runCommands(host: Host, exec: Exec, timeoutMs = COMMAND_TIMEOUT_MS): Promise<CommandOutput[]> {
  return Promise.all(
    COMMANDS.map(async (c): Promise<CommandOutput> => {
      const file = await locate(host, c.tool);
      if (file === null) {
        const error = `${c.tool} not found in ${BIN_DIRS.join(' ')}`;
        return { record: { name: c.name, argv: null, status: 'missing', exitCode: null, error, durationMs: 0, stdoutBytes: 0, stderrBytes: 0 }, files: [[`${c.name}.exit`, 'missing\n']] };
      }
      const r = await exec.run(file, c.args, { timeoutMs, env: { PATH: BIN_DIRS.join(':'), LC_ALL: 'C' } });
      const status = r.timedOut ? 'timeout' : r.exitCode === null ? 'error' : 'exited';
      const files: [string, string][] = [[`${c.name}.txt`, r.stdout], [`${c.name}.exit`, `${status === 'exited' ? r.exitCode : status}\n`]];
      if (r.stderr) files.push([`${c.name}.stderr.txt`, r.stderr]);
      return {
        record: { name: c.name, argv: [file, ...c.args], status, exitCode: r.exitCode, error: r.error, durationMs: r.durationMs, stdoutBytes: Buffer.byteLength(r.stdout), stderrBytes: Buffer.byteLength(r.stderr) },
        files,
      };
    }),
  );
}

export interface DevNode {
  readonly path: string;
  readonly kind: string;
  /** Permission bits in octal ("0666"). */
  readonly mode: string;
  /** [major, minor] for character and block devices (Linux new_encode_dev layout). */
  readonly rdev: readonly [number, number] | null;
}

// glibc gnu_dev_major/minor on the low 32 bits (majors above 4095 do not occur on GPU nodes).
const major = (d: number): number => (d >>> 8) & 0xfff;
const minor = (d: number): number => (d & 0xff) | ((d >>> 12) & 0xfff00);

/** /dev/nvidia*, /dev/nvidia-caps/*, /dev/infiniband/*: names, modes and numbers from lstat; nothing is opened. */
export async function listDev(host: Host): Promise<DevNode[]> {
  const out: DevNode[] = [];
  const add = async (dir: string, re: RegExp, depth: number): Promise<void> => {
    const ls = await host.list(dir);
    if (!ls.ok) return;
    for (const name of ls.value.filter((n) => re.test(n))) {
      const p = `${dir}/${name}`;
      const st = await host.lstat(p);
      if (!st.ok) continue;
      const dev = st.value.kind === 'char' || st.value.kind === 'block';
      out.push({ path: p, kind: st.value.kind, mode: st.value.mode.toString(8).padStart(4, '0'), rdev: dev ? [major(st.value.rdev), minor(st.value.rdev)] : null });
      if (st.value.kind === 'dir' && depth > 0) await add(p, /./, depth - 1);
    }
  };
  await add('/dev', /^nvidia/, 1);
  await add('/dev/infiniband', /./, 0);
  return out;
}
