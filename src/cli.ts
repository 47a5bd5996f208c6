#!/usr/bin/env node
// gdrgate's entry point, the same source for every way it is built (scripts/shapes.mjs): the modules
// (dist/cli.js), the one-file program (dist/gdrgate.cjs) and the startup snapshot made from that file on the
// node itself (`gdrgate startup-snapshot`). Under `node --build-snapshot` it prepares the snapshot instead of
// running; the snapshot's main then runs the command line (src/cli/startup-snapshot.ts).
import { startupSnapshot } from 'node:v8';
import { runCli } from './cli/run.js';
import { prepareSnapshot } from './cli/startup-snapshot.js';

if (startupSnapshot.isBuildingSnapshot()) prepareSnapshot(process.env.GDRGATE_SNAPSHOT_WARMUP);
// Exit at once: after a deadline, a blocked read may still be pending and must not keep the prolog alive.
else void runCli(process.argv.slice(2), 'modules').then((code) => process.exit(code));
