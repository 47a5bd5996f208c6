// The full command surface on yargs (every command but the prolog's fast path goes through here).
import yargs from 'yargs';
import { UsageError } from '../errors.js';
import { VERSION } from '../version.js';
import { out } from '../host/stdout.js';

const root = { type: 'string', default: '/', describe: 'read the node under this directory (a capture) instead of /' } as const;
const json = { type: 'boolean', default: false, describe: 'print the JSON report (schemas/report.schema.json)' } as const;

export async function main(argv: string[]): Promise<number> {
  let code = 0;
  const set = (p: Promise<number>) => p.then((c) => void (code = c));
  const parser = yargs(argv)
    .scriptName('gdrgate')
    .version(VERSION)
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
          .option('baseline', { type: 'string', describe: 'baseline JSON: also check against the class of this node' })
          .option('node', { type: 'string', describe: 'node name for class selection (default: SLURMD_NODENAME, then hostname)' })
          .option('only', { type: 'array', string: true, describe: 'check ids, comma or space separated' })
          .option('verbose', { type: 'boolean', default: false, alias: 'v' }),
      (a) => set(import('./check.js').then((m) => m.checkCommand(a))),
    )
    .command(
      'topo',
      'print the GPU↔NIC PCIe matrix computed from sysfs, in nvidia-smi topo -m layout',
      (y) =>
        y
          .option('root', root)
          .option('json', { ...json, describe: 'print the matrix as JSON (schemas/topo.schema.json)' })
          .option('nccl-xml', { type: 'boolean', default: false, describe: "print the topology in NCCL's XML format (for NCCL_TOPO_FILE)" }),
      (a) => set(import('./topo.js').then((m) => m.topoCommand(a))),
    )
    .command(
      ['prolog', 'health'],
      'the Slurm gate: Prolog (before each job) or HealthCheckProgram; drains with a gdrgate: reason on failure',
      (y) =>
        y
          .option('config', { type: 'string', describe: 'config JSON (default $GDRGATE_CONFIG, then /etc/gdrgate/config.json)' })
          .option('root', { type: 'string', describe: 'override the config root' })
          .option('baseline', { type: 'string', describe: 'override the config baseline' })
          .option('dry-run', { type: 'boolean', default: false, describe: 'everything except the scontrol write; prints the reason' }),
      (a) => set(import('./gate.js').then((m) => m.gateCommand({ mode: a._[0] === 'health' ? 'health' : 'prolog', config: a.config, root: a.root, baseline: a.baseline, dryRun: a['dry-run'] }))),
    )
    .command(
      'agent',
      "resident gate the Slurm Prolog asks first (slurm/prolog.sh AGENT=): answers only 'healthy', never drains; run it under a service manager as root",
      (y) =>
        y
          .option('config', { type: 'string', describe: 'config JSON the Prolog names (default $GDRGATE_CONFIG, then /etc/gdrgate/config.json)' })
          .option('dir', { type: 'string', default: '/run/gdrgate-agent', describe: 'directory for the request FIFO, pid file and reply FIFOs (made 0700 if absent)' })
          .option('watch', { type: 'array', string: true, describe: 'more files whose change on disk makes the agent exit (its own code is always watched)' }),
      (a) => set(import('./agent.js').then((m) => m.agentCommand({ config: a.config, dir: a.dir, watch: a.watch }))),
    )
    .command(
      'resume',
      'resume this node if the checks pass and its drain reason is ours',
      (y) =>
        y
          .option('config', { type: 'string' })
          .option('node', { type: 'string' })
          .option('force', { type: 'boolean', default: false, describe: 'skip the re-check (still never overrides a reason that is not ours)' }),
      (a) => set(import('./resume.js').then((m) => m.resumeCommand(a))),
    )
    .command(
      'snapshot',
      'write one tar.gz with everything the checks read (replay it with --root FILE)',
      (y) =>
        y
          .option('root', root)
          .option('out', { type: 'string', nargs: 1, describe: 'output file (default gdrgate-<host>-<UTC time>.tar.gz here; - for stdout)' })
          .option('out-dir', { type: 'string', nargs: 1, describe: 'write DIR/$SLURMD_NODENAME.tar.gz (inside a Slurm step: what fleet collect runs on each node)' })
          .option('commands', { type: 'boolean', default: true, describe: 'on a live root, also save nvidia-smi, ibv_devinfo and lspci outputs (--no-commands to skip)' }),
      (a) => set(import('./snapshot.js').then((m) => m.snapshotCommand({ root: a.root, out: a.out, outDir: a['out-dir'], commands: a.commands }))),
    )
    .command(
      'compare <a> <b>',
      'compare a suspect node (A) with a known-good one (B: snapshot, directory or baseline JSON), worst difference first',
      (y) =>
        y
          .positional('a', { type: 'string', demandOption: true, describe: 'suspect: snapshot file or directory' })
          .positional('b', { type: 'string', demandOption: true, describe: 'known-good: snapshot file, directory or baseline JSON' })
          .option('json', { type: 'boolean', default: false, describe: 'print JSON (schemas/compare.schema.json)' })
          .option('node', { type: 'string', describe: "with a baseline B: the class of this node name (default: A's hostname)" }),
      (a) => set(import('./compare.js').then((m) => m.compareCommand({ a: a.a, b: a.b, json: a.json, node: a.node }))),
    )
    .command(
      'task',
      "Slurm TaskProlog: memlock and RDMA/GPU device visibility as the job sees them, against the Prolog's record; prints TaskProlog lines",
      (y) =>
        y
          .option('standalone', { type: 'boolean', default: false, describe: 'by hand (e.g. inside a container): no Slurm, no host record; a text report, exit 1 on a finding' })
          .option('root', { type: 'string', describe: "read the job's view under this directory instead of / (default: the config root)" })
          .option('config', { type: 'string', describe: 'config JSON (default $GDRGATE_CONFIG, then /etc/gdrgate/config.json)' })
          .option('fail', { type: 'boolean', default: false, describe: 'exit 1 on a failing finding, which fails the task (default: warn only)' }),
      (a) => set(import('./task.js').then((m) => m.taskCommand({ standalone: a.standalone, root: a.root, config: a.config, fail: a.fail }))),
    )
    .command(
      'epilog',
      "Slurm Epilog: remove the job's state directory; with `probes` configured, bandwidth probes under a budget and sampling policy, judged against the baseline (drains with gdrgate: bw-… only on a sustained fail)",
      (y) =>
        y
          .option('config', { type: 'string', describe: 'config JSON (default $GDRGATE_CONFIG, then /etc/gdrgate/config.json)' })
          .option('dry-run', { type: 'boolean', default: false, describe: 'probe now whatever the sampling policy says; write no sample, state or drain' }),
      (a) => set(import('./epilog.js').then((m) => m.epilogCommand({ config: a.config, dryRun: a['dry-run'] }))),
    )
    .command(
      'samples',
      "per probe path and recipe: count, min, p50, p95, p99, last, whole history against the recent window, from the epilog's spool",
      (y) =>
        y
          .option('config', { type: 'string', describe: 'config JSON: its spool and probes.window' })
          .option('spool', { type: 'string', describe: 'spool directory (default: the config\'s)' })
          .option('probe', { type: 'array', string: true, describe: 'only these probes (ib-write-host, ib-write-gpu, nvbw-h2d, nvbw-d2h)' })
          .option('since', { type: 'string', describe: 'recent window: since this long ago (90m, 24h, 7d) or an ISO time, instead of the last N samples' })
          .option('window', { type: 'number', describe: 'recent window: the last N samples of each path (default probes.window, 5)' })
          .option('json', { type: 'boolean', default: false, describe: 'print JSON' })
          .option('prom', { type: 'string', describe: 'also write a node_exporter textfile here (atomically)' }),
      (a) => set(import('./samples.js').then((m) => m.samplesCommand({ config: a.config, spool: a.spool, probe: a.probe, since: a.since, window: a.window, json: a.json, prom: a.prom }))),
    )
    .command('drill', 'failure drills: stage one bounded fault on a node, prove drain → requeue → resume → a job runs, every step timed', (y) =>
      y
        .option('config', { type: 'string', describe: 'config JSON (default $GDRGATE_CONFIG, then /etc/gdrgate/config.json)' })
        .option('node', { type: 'string', describe: 'node name (default: SLURMD_NODENAME, then hostname)' })
        .command(
          'start',
          'write the drill file: the next prolog/health on the node sees exactly this fault (refused unless the node is drained or reserved, or --drain/--force)',
          (z) =>
            z
              .option('fault', { type: 'string', demandOption: true, describe: 'pcie-link:<bdf>=x8 | pcie-acs:<bridge bdf>=ReqRedir | pcie-relaxed-ordering:<nic bdf>=off | pcie-throttle:<port bdf>=2 | pcie-payload:<bdf>=mps512 | gpu-bar1:<gpu bdf>=256M | memlock=64K | gpudirect-mechanism=none' })
              .option('minutes', { type: 'number', describe: 'expiry (default 30; fractions allowed)' })
              .option('drain', { type: 'boolean', default: false, describe: 'drain the node for the drill first (reason carries the drill marker)' })
              .option('reservation', { type: 'string', describe: 'Slurm reservation the probe jobs run in' })
              .option('force', { type: 'boolean', default: false, describe: 'arm on a node that is neither drained nor reserved, or over an active drill' }),
          (a) => set(import('./drill.js').then((m) => m.drillStart({ config: a.config, node: a.node, fault: a.fault, minutes: a.minutes, force: a.force, drain: a.drain, reservation: a.reservation }))),
        )
        .command(
          'run',
          'submit a probe job, time the drain, record the job\'s fate and sinfo -R, follow the requeued probe to the node it runs on (cancelled when no other node can take it), remove the fault, resume, time back to idle, run a follow-up job; report (schemas/drill.schema.json) and append to <stateDir>/drills.jsonl',
          (z) => z.option('json', { type: 'boolean', default: false, describe: 'print the JSON drill report' }).option('step-seconds', { type: 'number', describe: 'longest wait for each step (default 90)' }),
          (a) => set(import('./drill.js').then((m) => m.drillRun({ config: a.config, node: a.node, json: a.json, stepSeconds: a['step-seconds'] }))),
        )
        .command(
          'stop',
          'remove the drill file and resume the node only if its drain reason carries a drill marker',
          (z) => z,
          (a) => set(import('./drill.js').then((m) => m.drillStop({ config: a.config, node: a.node }))),
        )
        .demandCommand(1, 'name a drill subcommand: start, run, stop'),
    )
    .command('fleet', 'the fleet view: every node of a class against the others (snapshots and sample spools of many nodes)', (y) =>
      y
        .command(
          'report <dir>',
          "judge a directory of node snapshots (<node>.tar.gz) and spools (<node>.samples.jsonl): each class's majority, the nodes that differ, weak rails; worst first",
          (z) =>
            z
              .positional('dir', { type: 'string', demandOption: true, describe: 'directory of <node>.tar.gz snapshots and <node>.samples.jsonl spools' })
              .option('json', { type: 'boolean', default: false, describe: 'print JSON (schemas/fleet-report.schema.json)' })
              .option('html', { type: 'string', nargs: 1, describe: 'also write one self-contained HTML report to this file' })
              .option('baseline', { type: 'string', describe: "group nodes by this baseline's classes (default: the whole directory is one class)" })
              .option('prometheus', { type: 'string', describe: 'also read bandwidth figures (gdrgate_* series) from this Prometheus URL' }),
          (a) => set(import('./fleet.js').then((m) => m.fleetReportCommand({ dir: a.dir, json: a.json, html: a.html, baseline: a.baseline, prometheus: a.prometheus }))),
        )
        .command(
          'collect',
          'run gdrgate snapshot on every node through one srun step into DIR/<node>.tar.gz',
          (z) =>
            z
              .option('nodes', { type: 'string', demandOption: true, describe: "Slurm host list (gpu[001-128],login1)" })
              .option('out', { type: 'string', demandOption: true, describe: 'output directory on the shared filesystem: <node>.tar.gz and gdrgate-collect.json' })
              .option('timeout', { type: 'number', describe: 'bound of the whole collection, seconds (default 120); nodes not in by then are listed as missing' })
              .option('root', { type: 'string', describe: "each node's root for its snapshot (default /)" })
              .option('commands', { type: 'boolean', default: true, describe: 'also run the snapshot\'s read-only commands on each node (--no-commands: sysfs/procfs only)' })
              .option('srun', { type: 'string', describe: 'srun, absolute path (default: the config\'s srun, else /usr/bin/srun)' })
              .option('scontrol', { type: 'string', describe: 'scontrol, absolute path (default: the config\'s, else /usr/bin/scontrol)' })
              .option('config', { type: 'string', describe: 'gate config to take the srun and scontrol paths from' })
              .option('json', { type: 'boolean', default: false, describe: 'print the summary as JSON' }),
          (a) =>
            set(
              import('./fleet.js').then((m) =>
                m.fleetCollectCommand({ nodes: a.nodes, out: a.out, timeout: a.timeout, root: a.root, commands: a.commands, srun: a.srun, scontrol: a.scontrol, config: a.config, json: a.json }),
              ),
            ),
        )
        .demandCommand(1, 'name a fleet subcommand: report, collect'),
    )
    .command('baseline', 'capture or validate a baseline', (y) =>
      y
        .command(
          'capture',
          'print a baseline class captured from this known-good node (or --root)',
          (z) =>
            z
              .option('root', root)
              .option('class', { type: 'string', default: 'default', describe: 'class name' })
              .option('match', { type: 'array', string: true, describe: 'host patterns: glob, /regex/, gpu[001-064], !negation' })
              .option('platform', { choices: ['bare-metal', 'virtualized'] as const, describe: 'default: detected from /proc/cpuinfo' })
              .option('with-probes', { type: 'boolean', default: false, describe: "also run the config's bandwidth probes (probes.capture.runs times) and record their bands with the recipe" })
              .option('config', { type: 'string', describe: 'config JSON for --with-probes (default $GDRGATE_CONFIG, then /etc/gdrgate/config.json)' })
              .option('allow-empty', { type: 'boolean', default: false, describe: 'write the class even when the node shows no GPU and no RDMA adapter' })
              .option('from-fleet', { type: 'string', describe: "a fleet directory (fleet report DIR): the class from its majority, bandwidth bands from the fleet's distribution; the nodes that disagreed on stderr" })
              .option('from-class', { type: 'string', describe: 'with --from-fleet: which class of the fleet (default the largest)' }),
          (a) => set(import('./baseline.js').then((m) => m.captureCommand({ root: a.root, class: a.class, match: a.match, platform: a.platform, withProbes: a['with-probes'], config: a.config, allowEmpty: a['allow-empty'], fromFleet: a['from-fleet'], fromClass: a['from-class'] }))),
        )
        .command(
          'validate <file>',
          'validate a baseline file against the schema',
          (z) => z.positional('file', { type: 'string', demandOption: true }),
          (a) => set(import('./baseline.js').then((m) => m.validateCommand({ file: a.file }))),
        )
        .demandCommand(1, 'name a baseline subcommand'),
    )
    .fail((msg, err) => {
      throw err ?? new UsageError(msg);
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

