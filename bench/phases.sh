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
printf 'require("node:v8").startupSnapshot.setDeserializeMainFunction(() => {});\n' >"$W/empty.cjs"
"$N" --snapshot-blob "$W/empty.blob" --build-snapshot "$W/empty.cjs"
job=100
record() {
  local name=$1
  shift
  mkdir -p "$W/$name"
  for i in $(seq "${ROUNDS:-20}"); do
    job=$((job + 1))
    env -i SLURMD_NODENAME=gpu001 SLURM_JOB_ID=$job SLURM_JOB_UID="$(id -u)" SLURM_JOB_GID="$(id -g)" "$PERF" record -q -F 2000 -g -o "$W/perf.data" -- "$@" >/dev/null 2>&1 </dev/null || true
    "$PERF" script -i "$W/perf.data" >"$W/$name/$i.txt" 2>/dev/null
  done
}
record node-e0 "$N" -e 0
record empty-snapshot "$N" --snapshot-blob "$W/empty.blob"
record blob-version "$N" --snapshot-blob dist/gate.blob version
record prolog-blob "$N" --snapshot-blob dist/gate.blob prolog --config "$W/config.json"
grep -c '"result":"healthy"' "$W/gate.log" | sed 's/^/healthy Prologs: /'
(cd "$W" && "$N" "$OLDPWD/bench/perf-phases.mjs" node-e0 empty-snapshot blob-version prolog-blob)
