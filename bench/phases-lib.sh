# Sourced by bench/phases.sh and scripts/device-phases.sh (not run alone). Needs PERF (a perf command), N (a Node)
# and W (a work directory).
# empty_blob: $W/empty.blob, a startup snapshot that holds nothing, made by this Node.
empty_blob() {
  printf 'require("node:v8").startupSnapshot.setDeserializeMainFunction(() => {});\n' >"$W/empty.cjs"
  "$N" --snapshot-blob "$W/empty.blob" --build-snapshot "$W/empty.cjs"
}
# record DIR UID CMD...: ROUNDS (default 20) runs of CMD under `perf record -g` at 2 kHz, in the environment slurmd
# gives a Prolog of uid UID (a new job id each run), each run's `perf script` text in DIR/<n>.txt.
record() {
  local dir=$1 uid=$2 i
  shift 2
  mkdir -p "$dir"
  for i in $(seq "${ROUNDS:-20}"); do
    job=$((${job:-100} + 1))
    env -i SLURMD_NODENAME=gpu SLURM_JOB_ID=$job SLURM_JOB_UID="$uid" SLURM_JOB_GID="$uid" "$PERF" record -q -F 2000 -g -o "$W/perf.data" -- "$@" >/dev/null 2>&1 </dev/null || :
    "$PERF" script -i "$W/perf.data" >"$dir/$i.txt" 2>/dev/null
  done
}
