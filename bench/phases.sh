#!/usr/bin/env bash
# Where the no-agent Prolog's CPU time goes, by phase (bench/perf-phases.mjs), on this machine: ROUNDS (default 20)
# runs under `perf record -g` of each of node -e 0, Node from an empty user-land startup snapshot, dist/gate.blob
# saying its version, and a passing Prolog from dist/gate.blob on the bench's 8-GPU tree (bench/prolog.ts's), in
# the environment slurmd gives a Prolog. Needs perf (Debian: linux-perf) and `npm run build`; run as root or with
# kernel.perf_event_paranoid <= 1 for kernel frames. Usage: bash bench/phases.sh
set -eu
cd "$(dirname "$0")/.."
PERF=${PERF:-$(command -v perf || true)}
[ -n "$PERF" ] || { echo "bench/phases.sh: no perf on PATH (Debian: apt-get install linux-perf)" >&2; exit 2; }
N=${NODE:-$(command -v node)}
[ -f dist/gate.blob ] || { echo "bench/phases.sh: dist/gate.blob missing: npm run build" >&2; exit 2; }
npx tsc -p bench/tsconfig.json
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
"$N" --input-type=module -e '
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
const [dir, repo] = process.argv.slice(1);
const { buildTree } = await import(`${repo}/.bench/test/gen/sysfs-tree.js`);
const { node } = await import(`${repo}/.bench/test/gen/topologies/sglang30401-hgx-h100.js`);
const { withOthers } = await import(`${repo}/.bench/bench/hgx-others.js`);
await buildTree(`${dir}/tree`, withOthers(node));
const cap = spawnSync(process.execPath, [`${repo}/dist/cli.js`, "baseline", "capture", "--root", `${dir}/tree`, "--class", "hgx", "--match", "*"], { encoding: "utf8" });
if (cap.status !== 0) throw new Error(cap.stderr);
writeFileSync(`${dir}/baseline.json`, cap.stdout);
writeFileSync(`${dir}/config.json`, JSON.stringify({ baseline: `${dir}/baseline.json`, root: `${dir}/tree`, scontrol: "/bin/false", logFile: `${dir}/gate.log`, stateDir: `${dir}/state` }));
' "$W" "$PWD"
. bench/phases-lib.sh
empty_blob
record "$W/node-e0" "$(id -u)" "$N" -e 0
record "$W/empty-snapshot" "$(id -u)" "$N" --snapshot-blob "$W/empty.blob"
record "$W/blob-version" "$(id -u)" "$N" --snapshot-blob dist/gate.blob version
record "$W/prolog-blob" "$(id -u)" "$N" --snapshot-blob dist/gate.blob prolog --config "$W/config.json"
grep -c '"result":"healthy"' "$W/gate.log" | sed 's/^/healthy Prologs: /'
(cd "$W" && "$N" "$OLDPWD/bench/perf-phases.mjs" node-e0 empty-snapshot blob-version prolog-blob)
