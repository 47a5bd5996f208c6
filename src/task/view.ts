// The job's view, read once through the Host: its own memlock, the RDMA adapters and verbs nodes it can
// see, the NVIDIA device nodes, and whether it may open each one.
import type { Host, StatInfo } from '../host/host.js';
import { present, type Readable, unknown } from '../model/fact.js';
import type { Limit } from '../model/inventory.js';
import { parseMemlock } from '../parsers/limits.js';
import { NVIDIA_RE, UVERBS_RE } from '../state/names.js';
import type { Access, AccessProbe } from './access.js';

export interface DevNode {
  readonly name: string;
  readonly kind: StatInfo['kind'] | null;
  readonly access: Access;
  readonly why?: string;
}

export interface JobView {
  /** /proc/self/limits "Max locked memory". */
  readonly self: Readable<Limit>;
  /** /sys/class/infiniband entries; an absent directory is an empty list. */
  readonly hcas: Readable<readonly string[]>;
  /** /sys/class/infiniband_verbs uverbs<N> entries: the verbs nodes the kernel made for the visible adapters. */
  readonly verbsClass: Readable<readonly string[]>;
  /** /dev/infiniband/uverbs<N>. */
  readonly uverbs: Readable<readonly DevNode[]>;
  /** /dev/nvidia* (directories such as nvidia-caps left out). */
  readonly nvidia: Readable<readonly DevNode[]>;
}

async function names(host: Host, kpath: string, re?: RegExp): Promise<Readable<readonly string[]>> {
  const r = await host.list(kpath);
  if (r.ok) return present(re ? r.value.filter((n) => re.test(n)) : r.value);
  return r.missing ? present([]) : unknown(`${kpath}: ${r.reason}`);
}

async function nodes(host: Host, probe: AccessProbe, dir: string, re: RegExp): Promise<Readable<readonly DevNode[]>> {
  const ls = await names(host, dir, re);
  if (ls.state === 'unknown') return ls;
  const all = await Promise.all(
    ls.value.map(async (name): Promise<DevNode | null> => {
      const p = `${dir}/${name}`;
      const st = await host.stat(p);
      if (st.ok && st.value.kind === 'dir') return null;
      const a = await probe.rw(p);
      // Read from the answer when judged, not here: the TaskProlog's facts answer a node the judge never reads only then.
      return {
        name,
        kind: st.ok ? st.value.kind : null,
        get access(): DevNode['access'] {
          return a.access;
        },
        ...(a.why ? { why: a.why } : {}),
      };
    }),
  );
  return present(all.filter((n): n is DevNode => n !== null));
}

export async function readJobView(host: Host, probe: AccessProbe): Promise<JobView> {
  const limits = host.readText('/proc/self/limits').then((r): Readable<Limit> => {
    if (!r.ok) return unknown(`/proc/self/limits: ${r.reason}`);
    const p = parseMemlock(r.value);
    return p.ok ? present(p.value) : unknown(`/proc/self/limits: ${p.error}`);
  });
  const [self, hcas, verbsClass, uverbs, nvidia] = await Promise.all([
    limits,
    names(host, '/sys/class/infiniband'),
    names(host, '/sys/class/infiniband_verbs', UVERBS_RE),
    nodes(host, probe, '/dev/infiniband', UVERBS_RE),
    nodes(host, probe, '/dev', NVIDIA_RE),
  ]);
  return { self, hcas, verbsClass, uverbs, nvidia };
}
