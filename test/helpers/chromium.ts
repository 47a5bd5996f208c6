// Debian's chromium, headless, as a test drives it: the DOM after scripts ran, what the page wrote to its console,
// and a screenshot. null when no chromium is installed (the caller skips, saying so).
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';

export function chromiumPath(): string | null {
  const c = [process.env.CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((x): x is string => !!x);
  return c.find((p) => existsSync(p)) ?? null;
}

const BASE = ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions', '--hide-scrollbars'];

export interface Loaded {
  readonly dom: string;
  /** The page's console lines (console.log/error, uncaught errors), as chromium logs them: `"text", source: url (line)`. */
  readonly console: readonly string[];
  readonly code: number | null;
}

/** --dump-dom with --enable-logging=stderr --v=0: chromium logs each console message as INFO:CONSOLE. */
export function loadPage(bin: string, file: string, userDataDir: string): Loaded {
  const r = spawnSync(bin, [...BASE, `--user-data-dir=${userDataDir}`, '--enable-logging=stderr', '--v=0', '--dump-dom', pathToFileURL(file).href], { encoding: 'utf8', timeout: 90_000, maxBuffer: 64 << 20 });
  const console = (r.stderr ?? '').split('\n').filter((l) => /:CONSOLE[:(]/.test(l)).map((l) => l.replace(/^.*?:CONSOLE[^\]]*\]\s*/, ''));
  return { dom: r.stdout ?? '', console, code: r.status };
}

export function screenshot(bin: string, file: string, png: string, userDataDir: string, size = '1280,1600'): number | null {
  return spawnSync(bin, [...BASE, `--user-data-dir=${userDataDir}`, `--window-size=${size}`, `--screenshot=${png}`, pathToFileURL(file).href], { encoding: 'utf8', timeout: 90_000 }).status;
}
