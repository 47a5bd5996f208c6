// The full command surface on yargs (every command but the prolog's fast path goes through here).
import yargs, { type ArgumentsCamelCase, type Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { versionLine } from '../version.js';
import { out } from '../host/stdout.js';
import { amount, count, flag, ids, list, text, texts, word } from './options.js';
import { faultHelp } from '../drill/fault.js';
import { fleetReportArgs } from './fleet-flags.js';

const root = text('--root', { default: '/', describe: 'read the node under this directory (a capture) instead of /' });
const json = flag('print the JSON report (schemas/report.schema.json)');
const config = text('--config', { describe: 'config JSON (default $GDRGATE_CONFIG, then /etc/gdrgate/config.json)' });
const node = text('--node', { describe: 'node name (default: SLURMD_NODENAME, then hostname)' });
const REPORT = "judge a directory of node snapshots (<node>.tar.gz) and spools (<node>.samples.jsonl): each class's majority, the nodes that differ, weak rails; worst first";

/** One subcommand of a group, its name kept for the group's refusal. */
interface Sub<T> {
  readonly name: string;
  readonly add: (g: Argv<T>) => Argv<T>;
}
/** yargs' four arguments of a subcommand, its builder starting from the group's options (`T`). */
type SubOf<T> = <U>(command: string, describe: string, builder: (z: Argv<T>) => Argv<U>, handler: (a: ArgumentsCamelCase<U>) => Promise<void>) => Sub<T>;

/** A command made of subcommands (`drill start|run|stop`): one of them must be named, and the refusal lists them. */
function group<T>(y: Argv<T>, what: string, subs: (sub: SubOf<T>) => readonly Sub<T>[]): Argv<T> {
  const list = subs((command, describe, builder, handler) => ({ name: command.split(' ')[0]!, add: (g) => g.command(command, describe, builder, handler) }));
  return list.reduce((g, s) => s.add(g), y).demandCommand(1, `name a ${what} subcommand: ${list.map((s) => s.name).join(', ')}`);
}

export async function main(argv: string[]): Promise<number> {
  let code = 0;
  const set = (p: Promise<number>) => p.then((c) => void (code = c));
  const parser = yargs(argv)
    .scriptName('gdrgate')
    .version(versionLine())
    .help()
    .alias('h', 'help')
    .strict()
    .demandCommand(1, 'name a command')
    .command(
      'check',
      'check the GPU↔RDMA path of this node (or of --root) and print a report; never drains',
      (y) =>
        y
          .option('root', root)
          .option('json', json)
          .option('baseline', text('--baseline', { describe: 'baseline JSON: also check against the class of this node' }))
          .option('node', text('--node', { describe: 'node name for class selection (default: SLURMD_NODENAME, then hostname)' }))
          .option('only', ids('--only', 'check ids, comma or space separated'))
          .option('verbose', { type: 'boolean', default: false, alias: 'v' }),
      (a) => set(import('./check.js').then((m) => m.checkCommand(a))),
    )
    .command(
      'topo',
      'print the GPU↔NIC PCIe matrix computed from sysfs, in nvidia-smi topo -m layout',
      (y) =>
        y
          .option('root', root)
          .option('json', flag('print the matrix as JSON (schemas/topo.schema.json)'))
          .option('nccl-xml', flag("print the topology in NCCL's XML format (for NCCL_TOPO_FILE)")),
      (a) => set(import('./topo.js').then((m) => m.topoCommand(a))),
    )
    .command(
      ['prolog', 'health'],
      'the Slurm gate: Prolog (before each job) or HealthCheckProgram; drains with a gdrgate: reason on failure',
      (y) =>
        y
          .option('config', config)
          .option('root', text('--root', { describe: 'override the config root' }))
          .option('baseline', text('--baseline', { describe: 'override the config baseline' }))
          .option('dry-run', flag('everything except the scontrol write; prints the reason'))
          .option('outside-slurm', flag('prolog: run (and maybe drain) although slurmd did not start it (no SLURM_JOB_ID); refused otherwise')),
      (a) => set(import('./gate.js').then((m) => m.gateCommand({ mode: a._[0] === 'health' ? 'health' : 'prolog', config: a.config, root: a.root, baseline: a.baseline, dryRun: a['dry-run'], outsideSlurm: a['outside-slurm'] }))),
    )
    .command(
      'agent',
      "resident gate the Slurm Prolog asks first (slurm/prolog.sh AGENT=): answers only 'healthy', never drains; run it under a service manager as root",
      (y) =>
        y
          .option('config', text('--config', { describe: 'config JSON the Prolog names (default $GDRGATE_CONFIG, then /etc/gdrgate/config.json)' }))
          .option('dir', text('--dir', { default: '/run/gdrgate-agent', describe: 'directory for the request FIFO and the pid file (made 0700 if absent)' }))
          .option('watch', list('--watch', 'more files whose change on disk makes the agent exit (its own code is always watched)')),
      (a) => set(import('./agent.js').then((m) => m.agentCommand({ config: a.config, dir: a.dir, watch: a.watch }))),
    )
    .command(
      'resume',
      'resume this node if the checks pass and its drain reason is ours',
      (y) =>
        y
          .option('config', config)
          .option('node', node)
          .option('force', flag('skip the re-check (still never overrides a reason that is not ours)')),
      (a) => set(import('./resume.js').then((m) => m.resumeCommand(a))),
    )
    .command(
      'snapshot',
      'write one tar.gz with everything the checks read (replay it with --root FILE)',
      (y) =>
        y
          .option('root', root)
          .option('out', text('--out', { describe: 'output file (default gdrgate-<host>-<UTC time>.tar.gz here; - for stdout)' }))
          .option('out-dir', text('--out-dir', { describe: 'write DIR/$SLURMD_NODENAME.tar.gz (inside a Slurm step: what fleet collect runs on each node)' }))
          .option('commands', flag('on a live root, also save nvidia-smi, ibv_devinfo and lspci outputs (--no-commands to skip)', true)),
      (a) => set(import('./snapshot.js').then((m) => m.snapshotCommand({ root: a.root, out: a.out, outDir: a['out-dir'], commands: a.commands }))),
    )
    .command(
      'compare <a> <b>',
      'compare a suspect node (A) with a known-good one (B: snapshot, directory or baseline JSON), worst difference first',
      (y) =>
        y
          .positional('a', word('a', 'suspect: snapshot file or directory'))
          .positional('b', word('b', 'known-good: snapshot file, directory or baseline JSON'))
          .option('json', flag('print JSON (schemas/compare.schema.json)'))
          .option('node', text('--node', { describe: "with a baseline B: the class of this node name (default: A's hostname)" })),
      (a) => set(import('./compare.js').then((m) => m.compareCommand({ a: a.a, b: a.b, json: a.json, node: a.node }))),
    )
    .command(
      'task',
      "Slurm TaskProlog: memlock and RDMA/GPU device visibility as the job sees them, against the Prolog's record; prints TaskProlog lines",
      (y) =>
        y
          .option('standalone', flag('by hand (e.g. inside a container): no Slurm, no host record; a text report, exit 1 on a finding'))
          .option('root', text('--root', { describe: "read the job's view under this directory instead of / (default: the config root)" }))
          .option('config', config)
          .option('fail', flag('exit 1 on a failing finding, which fails the task (default: warn only)')),
      (a) => set(import('./task.js').then((m) => m.taskCommand({ standalone: a.standalone, root: a.root, config: a.config, fail: a.fail }))),
    )
    .command(
      'startup-snapshot',
      "make the gate's V8 startup snapshot on this node (the Slurm wrappers' fast path; the package makes it at install, the agent at its start), proven before it replaces the old one",
      (y) =>
        y
          .option('out', text('--out', { describe: 'where to write it (atomically, mode 0644; default: /var/lib/gdrgate/gate.blob for the installed program, gate.blob beside any other)' }))
          .option('warm-up', list('--warm-up', 'trees a prolog runs on before the heap is saved (default: the bundled capture and this node)'))
          .option('if-needed', flag('keep the blob there when this Node starts from it and it is of this program')),
      (a) => set(import('./startup.js').then((m) => m.startupCommand({ out: a.out, warmUp: a['warm-up'], ifNeeded: a['if-needed'] }))),
    )
    .command(
      'epilog',
      "Slurm Epilog: remove the job's state directory; with `probes` configured, bandwidth probes under a budget and sampling policy, judged against the baseline (drains with gdrgate: bw-… only on a sustained fail)",
      (y) =>
        y
          .option('config', config)
          .option('dry-run', flag('probe now whatever the sampling policy says; write no sample, state or drain')),
      (a) => set(import('./epilog.js').then((m) => m.epilogCommand({ config: a.config, dryRun: a['dry-run'] }))),
    )
    .command(
      'samples',
      "per probe path and recipe: count, min, p50, p95, p99, last, whole history against the recent window, from the epilog's spool",
      (y) =>
        y
          .option('config', text('--config', { describe: 'config JSON: its spool and probes.window' }))
          .option('spool', text('--spool', { describe: 'spool directory (default: the config\'s)' }))
          .option('probe', ids('--probe', 'only these probes (ib-write-host, ib-write-gpu, nvbw-h2d, nvbw-d2h), comma or space separated'))
          .option('since', text('--since', { describe: 'recent window: since this long ago (90m, 24h, 7d) or an ISO time, instead of the last N samples' }))
          .option('window', count('--window', 1, 1_000_000, 'recent window: the last N samples of each path (default: the config\'s probes.window, read when named by --config or $GDRGATE_CONFIG, or without --spool; else 5)'))
          .option('json', flag('print JSON'))
          .option('prom', text('--prom', { describe: 'also write a node_exporter textfile here (atomically)' }))
          .option('node', text('--node', { describe: "whose samples (default: SLURMD_NODENAME, then hostname, as the Epilog names this node)" })),
      (a) => set(import('./samples.js').then((m) => m.samplesCommand(a))),
    )
    .command(
      'slurm-config',
      "print the slurm.conf lines to change for gdrgate, merged with the site's (flags kept, scripts chained); never writes slurm.conf",
      (y) =>
        y
          .options(
            texts({
              conf: { describe: 'slurm.conf to read (default $SLURM_CONF, /etc/slurm/slurm.conf, ..., a configless node\'s cached copy)' },
              'slurm-version': { describe: 'target Slurm release, e.g. 23.11 (default: sinfo --version / slurmd -V, else 22.05)' },
              scripts: { default: '/usr/libexec/gdrgate', describe: "directory of gdrgate's prolog.sh, epilog.sh, taskprolog.sh, health.sh on the nodes" },
              'wrapper-dir': { describe: "where the chain wrappers go (default: the conf's directory; /etc/slurm when configless)" },
            }),
          )
          .option('json', flag('print JSON (schemas/slurm-config.schema.json)')),
      (a) => set(import('./slurm-config.js').then((m) => m.slurmConfigCommand({ conf: a.conf, slurmVersion: a['slurm-version'], scripts: a.scripts, wrapperDir: a['wrapper-dir'], json: a.json }))),
    )
    .command('drill', 'failure drills: stage one bounded fault on a node, prove drain → requeue → resume → a job runs, every step timed', (y) =>
      group(y.option('config', config).option('node', node), 'drill', (sub) => [
        sub(
          'start',
          'write the drill file: the next prolog/health on the node sees exactly this fault (refused unless the node is drained or reserved, or --drain/--force)',
          (z) =>
            z
              .option('fault', text('--fault', { demandOption: true, describe: faultHelp() }))
              .option('minutes', amount('--minutes', 24 * 60, 'expiry (default 30; fractions allowed)'))
              .option('drain', flag('drain the node for the drill first (reason carries the drill marker)'))
              .option('reservation', text('--reservation', { describe: 'Slurm reservation the probe jobs run in' }))
              .option('force', flag('arm on a node that is neither drained nor reserved, or over an active drill')),
          (a) => set(import('./drill.js').then((m) => m.drillStart({ config: a.config, node: a.node, fault: a.fault, minutes: a.minutes, force: a.force, drain: a.drain, reservation: a.reservation }))),
        ),
        sub(
          'run',
          'submit a probe job, time the drain, record the job\'s fate and sinfo -R, follow the requeued probe to the node it runs on (cancelled when no other node can take it), remove the fault, resume, time back to idle, run a follow-up job; report (schemas/drill.schema.json) and append to <stateDir>/drills.jsonl',
          (z) => z.option('json', flag('print the JSON drill report')).option('step-seconds', amount('--step-seconds', 3600, 'longest wait for each step (default 90)')),
          (a) => set(import('./drill.js').then((m) => m.drillRun({ config: a.config, node: a.node, json: a.json, stepSeconds: a['step-seconds'] }))),
        ),
        sub(
          'stop',
          'remove the drill file and resume the node only if its drain reason carries a drill marker',
          (z) => z,
          (a) => set(import('./drill.js').then((m) => m.drillStop({ config: a.config, node: a.node }))),
        ),
      ]),
    )
    .command('fleet', 'the fleet view: every node of a class against the others (snapshots and sample spools of many nodes)', (y) =>
      group(y, 'fleet', (sub) => [
        sub('report <dir>', REPORT, fleetReportArgs, (a) => set(import('./fleet.js').then((m) => m.fleetReportCommand(a)))),
        sub(
          'collect',
          'run gdrgate snapshot on every node through one srun step into DIR/<node>.tar.gz',
          (z) =>
            z
              .option('nodes', text('--nodes', { demandOption: true, describe: "Slurm host list (gpu[001-128],login1)" }))
              .option('out', text('--out', { demandOption: true, describe: 'output directory on the shared filesystem: <node>.tar.gz and gdrgate-collect.json' }))
              .option('timeout', amount('--timeout', 86_400, 'bound of the whole collection, seconds (default 120, at least 5); nodes not in by then are listed as missing'))
              .option('root', text('--root', { describe: "each node's root for its snapshot (default /)" }))
              .option('commands', flag('also run the snapshot\'s read-only commands on each node (--no-commands: sysfs/procfs only)', true))
              .option('srun', text('--srun', { describe: 'srun, absolute path (default: the config\'s srun, else /usr/bin/srun)' }))
              .option('scontrol', text('--scontrol', { describe: 'scontrol, absolute path (default: the config\'s, else /usr/bin/scontrol)' }))
              .option('config', text('--config', { describe: 'gate config to take the srun and scontrol paths from' }))
              .option('gdrgate', list('--gdrgate', 'the gdrgate the nodes run, absolute: /usr/sbin/gdrgate, or a node binary and its dist/cli.js (default: the one running here)'))
              .option('json', flag('print the summary as JSON')),
          (a) => set(import('./fleet.js').then((m) => m.fleetCollectCommand(a))),
        ),
      ]),
    )
    .command('baseline', 'capture or validate a baseline', (y) =>
      group(y, 'baseline', (sub) => [
        sub(
          'capture',
          'print a baseline class captured from this known-good node (or --root)',
          (z) =>
            z
              .option('root', root)
              .option('class', text('--class', { default: 'default', describe: 'class name' }))
              .option('match', list('--match', 'host patterns: glob, /regex/, gpu[001-064], !negation'))
              .option('platform', { choices: ['bare-metal', 'virtualized'] as const, describe: 'default: detected from /proc/cpuinfo' })
              .option('with-probes', flag("also run the config's bandwidth probes (probes.capture.runs times) and record their bands with the recipe"))
              .option('config', text('--config', { describe: 'config JSON for --with-probes (default $GDRGATE_CONFIG, then /etc/gdrgate/config.json)' }))
              .option('allow-empty', flag('write the class even when the node shows no GPU and no RDMA adapter'))
              .option('from-fleet', text('--from-fleet', { describe: "a fleet directory (fleet report DIR): the class from its majority, bandwidth bands from the fleet's distribution; the nodes that disagreed on stderr" }))
              .option('from-class', text('--from-class', { describe: 'with --from-fleet: which class of the fleet (default the largest)' })),
          (a) => set(import('./baseline.js').then((m) => m.captureCommand({ root: a.root, class: a.class, match: a.match, platform: a.platform, withProbes: a['with-probes'], config: a.config, allowEmpty: a['allow-empty'], fromFleet: a['from-fleet'], fromClass: a['from-class'] }))),
        ),
        sub(
          'validate <file>',
          'validate a baseline file against the schema',
          (z) => z.positional('file', word('file', 'the baseline JSON')),
          (a) => set(import('./baseline.js').then((m) => m.validateCommand({ file: a.file }))),
        ),
      ]),
    )
    .fail((msg, err) => {
      // yargs's own refusals (unknown or missing arguments, a coercion of options.ts) are the user's to fix; a
      // command's own error passes as it is.
      if (err && err.name !== 'YError') throw err;
      throw new UsageError(err?.message ?? msg, { cause: err });
    });
  // Bare `gdrgate`: the usage, then why it is an error (exit 2).
  if (argv.length === 0) {
    process.stderr.write(`${await parser.getHelp()}\n\n`);
    throw new UsageError('name a command');
  }
  // With a callback yargs hands over the text of --help and --version instead of printing it through
  // its own print to process.stdout (cut short by the exit, and an EPIPE there is an uncaught error).
  let said = '';
  await parser.parseAsync(argv, {}, (_err, _args, output) => void (said = output));
  if (said) out(said);
  return code;
}

