// The man pages, made from gdrgate's own definitions so they cannot drift: gdrgate(8) from every command's
// --help (the yargs definitions, walked down to subcommands), the exit codes from the one policy function
// (dist/runner/policy.js) and the installed files from the package's file list; gdrgate.json(5) from the
// descriptions in schemas/config.schema.json and schemas/baseline.schema.json.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { repoRoot } from './package-lib.mjs';

/** roff-safe text: backslashes, and a leading dot or quote that roff would read as a request. */
const esc = (s) => s.replace(/\\/g, '\\e').replace(/^([.'])/gm, '\\&$1').replace(/-/g, '\\-');
const block = (s) => ['.nf', esc(s.trimEnd()), '.fi'].join('\n');

/** `gdrgate <words> --help`, and the same for every command its "Commands:" section names. */
function helpTree(exe, words = []) {
  const help = execFileSync(exe[0], [...exe.slice(1), ...words, '--help'], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
  const section = /\nCommands:\n([\s\S]*?)\n\n/.exec(help)?.[1] ?? '';
  const subs = [...section.matchAll(/^ {2}gdrgate (.+?)(?: {2,}|$)/gm)].map((m) => m[1].split(' ').filter((w) => !/^[<[]/.test(w)));
  const children = subs.filter((s) => s.length === words.length + 1).flatMap((s) => helpTree(exe, s));
  return [{ words, help }, ...children];
}

async function exitCodes() {
  const { decide } = await import(pathToFileURL(path.join(repoRoot, 'dist/runner/policy.js')).href);
  const outcomes = [{ kind: 'healthy' }, { kind: 'unhealthy', failing: [] }, { kind: 'config-error', message: '' }, { kind: 'internal-error', message: '' }];
  const rows = [];
  for (const o of outcomes)
    for (const [mode, label] of [['check', 'check and the other commands'], ['prolog', 'prolog, health, epilog']])
      for (const policy of o.kind.endsWith('error') && mode === 'prolog' ? ['open', 'closed'] : ['open']) {
        const d = decide(mode, o, { onConfigError: policy, onInternalError: policy, drain: false });
        const when = o.kind.endsWith('error') && mode === 'prolog' ? ` (on${o.kind === 'config-error' ? 'Config' : 'Internal'}Error: ${policy})` : '';
        rows.push(`.TP\n.B ${d.exitCode}\n${esc(`${label}: ${o.kind}${when}${d.drain ? '; the node is drained with a gdrgate: reason' : ''}${d.failedOpen ? '; let through (fail-open), logged' : ''}`)}`);
      }
  return rows.join('\n');
}

export async function gdrgate8({ exe, version, files }) {
  const tree = helpTree(exe);
  const [top, ...commands] = tree;
  const list = /\nCommands:\n([\s\S]*?)\n\n/.exec(top.help)?.[1] ?? '';
  return [
    `.TH GDRGATE 8 "" "gdrgate ${version}" "System Administration"`,
    '.SH NAME',
    'gdrgate \\- Slurm health gate for the GPU<\\->RDMA PCIe path',
    '.SH SYNOPSIS',
    '.B gdrgate',
    '.I command',
    '[\\fIoptions\\fR]',
    '.SH DESCRIPTION',
    esc(JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')).description) + '.',
    block(list),
    '.SH COMMANDS',
    ...commands.map((c) => `.SS gdrgate ${esc(c.words.join(' '))}\n${block(c.help.split('\n').slice(1).join('\n').trim())}`),
    '.SH EXIT STATUS',
    await exitCodes(),
    '.TP\n.B 2\nany command: a usage error (unknown command or flag)',
    '.SH FILES',
    ...files.map((f) => `.TP\n.I ${esc(f.dest)}\n${esc(f.about)}`),
    '.SH SEE ALSO',
    '.BR gdrgate.json (5),',
    '.BR slurm.conf (5)',
    '',
  ].join('\n');
}

/** One entry per property, dotted paths, $ref followed into $defs (once per path), array items as []. */
function properties(schema, node, at, seen = new Set()) {
  if (node.$ref) {
    if (seen.has(node.$ref)) return [];
    return properties(schema, schema.$defs[node.$ref.split('/').pop()], at, new Set([...seen, node.$ref]));
  }
  const out = [];
  for (const [k, v] of Object.entries(node.properties ?? {})) {
    if (k === '$schema') continue;
    const name = at ? `${at}.${k}` : k;
    const target = v.$ref ? schema.$defs[v.$ref.split('/').pop()] : v;
    const type = v.type ?? target?.type ?? (v.enum ? 'one of' : v.const !== undefined ? 'const' : v.oneOf || v.anyOf ? 'one of' : 'see schema');
    const facts = [
      v.enum ? `one of ${v.enum.map((e) => JSON.stringify(e)).join(', ')}` : '',
      v.const !== undefined ? `always ${JSON.stringify(v.const)}` : '',
      v.default !== undefined ? `default ${JSON.stringify(v.default)}` : '',
      (node.required ?? []).includes(k) ? 'required' : '',
    ].filter(Boolean);
    out.push({ name, type: [type].flat().join('|'), about: [v.description ?? target?.description ?? '', ...facts].filter(Boolean).join('; ') });
    const inner = v.items ?? (v.type === 'object' || v.properties || v.$ref ? v : undefined);
    if (inner && inner !== v) out.push(...properties(schema, inner, `${name}[]`, seen));
    else if (inner) out.push(...properties(schema, { properties: target.properties, required: target.required }, name, v.$ref ? new Set([...seen, v.$ref]) : seen));
  }
  return out;
}

function schemaSection(title, file) {
  const schema = JSON.parse(readFileSync(path.join(repoRoot, 'schemas', file), 'utf8'));
  return [
    `.SH ${title}`,
    esc(schema.description ?? ''),
    `The schema: \\fI/usr/share/doc/gdrgate/schemas/${file}\\fR (JSON Schema draft 2020\\-12).`,
    ...properties(schema, schema, '').map((p) => `.TP\n.B ${esc(p.name)}\n(${esc(p.type)}) ${esc(p.about || 'see the schema')}`),
  ];
}

export function gdrgateJson5({ version, example }) {
  return [
    `.TH GDRGATE.JSON 5 "" "gdrgate ${version}" "File Formats"`,
    '.SH NAME',
    'gdrgate.json \\- gdrgate configuration (/etc/gdrgate/config.json) and baseline files',
    '.SH DESCRIPTION',
    'Both files are JSON, validated against the schemas below before any check runs; an invalid file is a configuration error (see',
    '.BR gdrgate (8),',
    'EXIT STATUS). They must be owned by root and not writable by group or others.',
    ...schemaSection('CONFIGURATION', 'config.schema.json'),
    '.SS The installed configuration',
    block(example),
    ...schemaSection('BASELINE', 'baseline.schema.json'),
    '.SH SEE ALSO',
    '.BR gdrgate (8)',
    '',
  ].join('\n');
}
