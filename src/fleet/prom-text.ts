// Pure: a node_exporter textfile (Prometheus text exposition format 0.0.4) as series. Strict: a line that is not
// a comment, blank or a well-formed sample is an error naming the line; nothing is skipped silently.
import { LABEL_NAME_RE, METRIC_NAME_RE, parsePromFloat } from './prom-value.js';
import type { Series } from './series.js';
import { MAX_LABELS } from './prom-answer.js';

export class PromTextError extends Error {
  override readonly name = 'PromTextError';
}

const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\', '"': '"', n: '\n' };

/** `{a="x",b="y"}` starting at text[i] === '{'; returns the labels and the index after '}'. */
function readLabels(line: string, start: number, fail: (why: string) => never): [Map<string, string>, number] {
  const labels = new Map<string, string>();
  let i = start + 1;
  for (;;) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    if (line[i] === '}') return [labels, i + 1];
    const nm = /^[A-Za-z_][A-Za-z0-9_]*/.exec(line.slice(i, i + 256));
    if (!nm) fail(`a label name expected at column ${i + 1}`);
    const name = nm[0];
    i += name.length;
    while (line[i] === ' ' || line[i] === '\t') i++;
    if (line[i] !== '=' || line[i + 1] !== '"') fail(`="…" expected after label ${name}`);
    i += 2;
    let v = '';
    for (;;) {
      const c = line[i];
      if (c === undefined) fail(`label ${name}: unterminated value`);
      if (c === '"') break;
      if (c === '\\') {
        const e = ESCAPES[line[i + 1] ?? ''];
        if (e === undefined) fail(`label ${name}: unknown escape \\${line[i + 1] ?? ''}`);
        v += e;
        i += 2;
        continue;
      }
      v += c;
      i++;
    }
    i++;
    if (labels.has(name)) fail(`label ${name} twice`);
    if (!LABEL_NAME_RE.test(name) || labels.size >= MAX_LABELS) fail(`more than ${MAX_LABELS} labels`);
    labels.set(name, v);
    while (line[i] === ' ' || line[i] === '\t') i++;
    if (line[i] === ',') i++;
    else if (line[i] !== '}') fail(`, or } expected after label ${name}`);
  }
}

export function parsePromText(text: string, source: string): Series[] {
  const out: Series[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, n) => {
    const line = raw.replace(/\r$/, '');
    const fail = (why: string): never => {
      throw new PromTextError(`${source}: line ${n + 1}: ${why}: ${JSON.stringify(line.slice(0, 120))}`);
    };
    if (/^[ \t]*(#.*)?$/.test(line)) return;
    const nm = /^[ \t]*([A-Za-z_:][A-Za-z0-9_:]*)/.exec(line);
    if (!nm || !METRIC_NAME_RE.test(nm[1]!)) fail('a metric name expected');
    let i = nm![0].length;
    let labels = new Map<string, string>();
    if (line[i] === '{') [labels, i] = readLabels(line, i, fail);
    const rest = line.slice(i).trim().split(/[ \t]+/);
    if (line[i] !== ' ' && line[i] !== '\t') fail('a space before the value expected');
    if (rest.length < 1 || rest.length > 2 || rest[0] === '') fail('a value and at most a timestamp expected');
    const value = parsePromFloat(rest[0]!);
    if (value === null) fail(`value ${JSON.stringify(rest[0]!.slice(0, 40))} is not a number`);
    if (rest[1] !== undefined && !/^-?\d{1,19}$/.test(rest[1])) fail('the timestamp is not an integer of milliseconds');
    out.push({ name: nm![1]!, labels, value: value!, source });
  });
  return out;
}
