// Bandwidth figures from node_exporter textfiles copied by another means (one *.prom per node, as the epilog
// writes them): the same figures loadPrometheus gives, read through a Host on the directory.
import { RootError } from '../errors.js';
import { openHost } from '../host/open.js';
import { parsePromText } from './prom-text.js';
import { statsFromSeries, type FleetStats, type Series, type StatWindow } from './series.js';

/** A textfile of ours is a few KiB per path; anything past this is not one. */
export const MAX_TEXTFILE_BYTES = 16 << 20;

/** The directory is unreadable, or a file in it is not a textfile (its name and line are in the message). */
export class TextfileError extends Error {
  override readonly name = 'TextfileError';
}

export async function loadStatsFromTextfiles(dir: string, window: StatWindow = 'all'): Promise<FleetStats> {
  const host = await openHost(dir).catch((e: unknown) => {
    throw new TextfileError(`${dir}: ${e instanceof RootError ? e.detail : (e as Error).message}`, { cause: e });
  });
  const names = await host.list('/');
  if (!names.ok) throw new TextfileError(`${dir}: ${names.reason}`);
  const series: Series[] = [];
  for (const name of names.value.filter((n) => n.endsWith('.prom'))) {
    const file = `${dir.replace(/\/+$/, '')}/${name}`;
    const st = await host.lstat(`/${name}`);
    if (!st.ok || st.value.kind !== 'file') continue; // node_exporter itself reads regular files only
    if (st.value.size > MAX_TEXTFILE_BYTES) throw new TextfileError(`${file}: ${st.value.size} bytes (at most ${MAX_TEXTFILE_BYTES})`);
    const text = await host.readText(`/${name}`);
    if (!text.ok) throw new TextfileError(`${file}: ${text.reason}`);
    // One by one: a textfile of more than ~120,000 series (16 MiB holds them) would make a spread call throw.
    for (const s of parsePromText(text.value, `textfile:${file}`)) series.push(s);
  }
  return statsFromSeries(series, window);
}
