#!/usr/bin/env bash
# Runs the tasks named by SEL (globs under ${TASK_ROOT:-bench/tasks}, e.g. "level1/5[4-9]_* level3/*"; a
# folder of KernelBench problems brought along works the same) through
# bench/run_bench.sh on a folder of links, resuming: on a machine that stops commands after 10
# minutes, the tasks that matter run first and the next call goes on. The bench runs what it is
# given in level and name order, so name one priority group per call. RESUME_FROM seeds a fresh
# machine's results (a results.json brought along); SAVE receives results.json and results.md
# after each call (the device tool's $OUT). LIMIT caps the whole call, DEADLINE the bench, TIMEOUT one task
# (100 s); RESULTS is the results folder (build-gpu/suite); BENCH_ARGS more options for the bench.
# KB_EXPORTS=1 then judges the verified candidates' KernelBench exports by KernelBench's protocol
# (bench/kernelbench_exports.py) in the same call, since the job folders exist only on this machine;
# it gets KB_BUDGET seconds (default: what is left of 580 s since this script started), so lower LIMIT
# to leave it time. Its results.json / results.md go to SAVE as kb_exports_results.*.
#   SEL="level2/7*" RESUME_FROM=.carry/suite/results.json SAVE=$OUT bash bench/run_selected.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=${RESULTS:-build-gpu/suite}
root=${TASK_ROOT:-bench/tasks}
links=$(mktemp -d)
mkdir -p "$out" "$links/level1" "$links/level2" "$links/level3"
if [ ! -f "$out/results.json" ] && [ -n "${RESUME_FROM:-}" ] && [ -f "$RESUME_FROM" ]; then cp "$RESUME_FROM" "$out/"; fi
# Tasks already in the results are left out of the folder too, so torch.compile's warm-up
# (run_bench.sh) spends the call's minutes only on the tasks still to run.
done_tasks=$(python3 -c 'import json, sys
try: print("\n".join(r["task"] for r in json.load(open(sys.argv[1]))["results"]))
except (OSError, ValueError, KeyError): pass' "$out/results.json")
for g in ${SEL:?name the tasks, e.g. SEL=\"level1/0*\"}; do
  for f in $root/$g; do
    task="$(basename "$(dirname "$f")")/$(basename "$f" .py)"
    if [ -f "$f" ] && ! grep -qx "$task" <<< "$done_tasks"; then
      ln -sf "$PWD/$f" "$links/$task.py"
    fi
  done
done
OUT=$out TASKS=$links timeout "${LIMIT:-560}" bash bench/run_bench.sh --resume --deadline "${DEADLINE:-330}" --timeout "${TIMEOUT:-100}" ${BENCH_ARGS:-} \
  > "$out/bench.log" 2>&1
echo "bench exit status $?"
if [ -n "${SAVE:-}" ]; then cp "$out/results.json" "$out/results.md" "$SAVE/"; fi
grep -E "^\| level|^not run|^bench:|^resuming" "$out/bench.log" | tail -80
if [ "${KB_EXPORTS:-0}" = 1 ]; then
  budget=${KB_BUDGET:-$((580 - SECONDS))}
  if [ "$budget" -lt 60 ]; then budget=60; fi
  python3 bench/kernelbench_exports.py --results "$out" --tasks "$root" --out "$out/kb_exports" --budget "$budget" \
    > "$out/kb_exports.log" 2>&1
  echo "kernelbench exports exit status $?"
  if [ -n "${SAVE:-}" ] && [ -f "$out/kb_exports/results.json" ]; then
    cp "$out/kb_exports/results.json" "$SAVE/kb_exports_results.json"
    cp "$out/kb_exports/results.md" "$SAVE/kb_exports_results.md"
    cp -r "$out/kb_exports/exports" "$SAVE/kb_exports" 2>/dev/null || true
  fi
  tail -3 "$out/kb_exports.log"
fi
