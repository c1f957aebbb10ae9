#!/bin/bash
# `bench --no-gpu --slurm` on a one-node Slurm cluster started here (cluster.sh): the same coverage
# table as the local run; an element cancelled while it runs (scancel of one array task) is submitted
# again and the table is still complete; a submitter killed midway is carried on by --resume, which
# submits nothing already done or queued and records each task once; an element whose node crashed
# (slurmd restarted) is submitted again. And `score --batch --slurm` and `verify --batch --slurm` write
# the local run's lines, one per row, each naming its node.
# Usage: bench_on_slurm.sh STITCHCUDA PYTHON SOURCE_DIR. Exit 0 pass, 1 fail, 77 skipped (says why).
set -u
BIN=$1 PY=$2 SRC=$3
cd "$SRC" || exit 1  # the score rows name the repository's files relative to it
CLUSTER=$(mktemp -d /tmp/stitch-slurm-test.XXXXXX)
. "$SRC/tests/slurm/cluster.sh"
WORK=$CLUSTER/test
submitter=""
# A submitter still polling when a check fails goes first, then the cluster (cluster.sh's own trap).
trap '[ -n "$submitter" ] && kill -9 "$submitter" 2>/dev/null; stop_cluster; rm -rf "$CLUSTER"' EXIT

fail() {
  echo "FAIL: $*" >&2
  tail -n 5 "$CLUSTER/log/slurmctld.log" "$CLUSTER/log/slurmd.log" >&2
  exit 1
}

# Three small tasks of the fixtures, as a KernelBench-style suite: a few seconds each on the CPU.
mkdir -p "$WORK/suite/level1"
for t in cat_inputs mask_not roll_shift; do cp "$SRC/tests/fixtures/tasks/$t.py" "$WORK/suite/level1/"; done
BENCH=("$BIN" bench "$WORK/suite" --no-gpu --python "$PY" --log-level warning)  # run as is: `&` gives its pid
# results.md from its summary on: the tables, without the date and command lines above them.
tables() { sed -n '/^## Summary/,$p' "$1/results.md"; }
# Each task exactly once in results.json, every one of the suite's.
once() {
  "$PY" - "$1/results.json" <<'EOF' || fail "results.json of $1 does not hold each task once"
import json, sys
tasks = [r["task"] for r in json.load(open(sys.argv[1]))["results"]]
assert sorted(tasks) == ["level1/cat_inputs", "level1/mask_not", "level1/roll_shift"], tasks
EOF
}
# The job id of the first element squeue shows running, after waiting for one.
running_element() {
  for _ in $(seq 240); do
    id=$(squeue -h -r -t RUNNING -o %i | head -1)
    [ -n "$id" ] && { echo "$id"; return 0; }
    sleep 0.25
  done
  return 1
}

SECONDS=0
"${BENCH[@]}" --jobs 2 --out "$WORK/local" >"$WORK/local.log" 2>&1 || fail "the local run: $(tail -5 "$WORK/local.log")"
echo "local run: ${SECONDS} s"

# One element cancelled while it runs: lost, submitted again, the table complete.
SECONDS=0
"${BENCH[@]}" --slurm --out "$WORK/slurm" >"$WORK/slurm.log" 2>&1 &
submitter=$!
victim=$(running_element) || fail "no element ever ran: $(cat "$WORK/slurm.log")"
scancel "$victim"
wait "$submitter" || fail "bench --slurm exited $?: $(tail -20 "$WORK/slurm.log")"
echo "slurm run, element $victim cancelled: ${SECONDS} s"
grep -F "$victim) lost: " "$WORK/slurm.log" | grep -qF "submitted again (attempt 2 of 3)" ||
  fail "the cancelled element $victim was not submitted again: $(cat "$WORK/slurm.log")"
diff <(tables "$WORK/local") <(tables "$WORK/slurm") || fail "the Slurm run's tables differ from the local run's"
once "$WORK/slurm"
grep -q '"node": "localhost"' "$WORK/slurm/results.json" || fail "results.json does not name the node"

# The node lost under a running element (slurmd restarted, the element's processes gone with it): the
# element is submitted again, the table complete, each task once.
SECONDS=0
"${BENCH[@]}" --slurm --out "$WORK/crashed" >"$WORK/crashed.log" 2>&1 &
submitter=$!
victim=$(running_element) || fail "no element ever ran: $(cat "$WORK/crashed.log")"
crash_node "$victim" || fail "the node did not come back after slurmd restarted: $(sinfo -h -n localhost -o '%T %E')"
wait "$submitter" || fail "bench --slurm exited $? after the node crashed: $(tail -20 "$WORK/crashed.log")"
echo "slurm run, node of element $victim crashed and slurmd restarted: ${SECONDS} s"
grep -F "$victim) lost: " "$WORK/crashed.log" | grep -qF "submitted again (attempt 2 of 3)" ||
  fail "the element $victim lost with its node was not submitted again: $(cat "$WORK/crashed.log")"
diff <(tables "$WORK/local") <(tables "$WORK/crashed") || fail "the crashed run's tables differ from the local run's"
once "$WORK/crashed"

# The submitter killed once its elements are queued: --resume submits none again and collects them all.
SECONDS=0
"${BENCH[@]}" --slurm --out "$WORK/resumed" >"$WORK/first.log" 2>&1 &
submitter=$!
running_element >/dev/null || fail "no element ever ran: $(cat "$WORK/first.log")"
kill -9 "$submitter"
wait "$submitter" 2>/dev/null
kill -0 "$submitter" 2>/dev/null && fail "the submitter $submitter outlived SIGKILL"
"${BENCH[@]}" --slurm --resume --out "$WORK/resumed" >"$WORK/resume.log" 2>&1 ||
  fail "bench --slurm --resume exited $?: $(tail -20 "$WORK/resume.log")"
echo "slurm run, submitter killed and resumed: ${SECONDS} s"
! grep -q "submitted job" "$WORK/resume.log" || fail "--resume submitted again what was queued: $(cat "$WORK/resume.log")"
diff <(tables "$WORK/local") <(tables "$WORK/resumed") || fail "the resumed run's tables differ from the local run's"
once "$WORK/resumed"
[ -z "$(squeue -h)" ] || fail "elements left in the queue: $(squeue -h)"

# The GPU run of one task, on a cluster without GPUs: no --gres asked for, saying so; the element's
# optimize finds no GPU, as it would locally, and its row names the node.
SECONDS=0
"$BIN" bench "$WORK/suite/level1/mask_not.py" --python "$PY" --log-level warning --slurm --out "$WORK/gpu" \
  >"$WORK/gpu.log" 2>&1 || fail "bench --slurm (the GPU run): $(tail -20 "$WORK/gpu.log")"
echo "slurm GPU run of one task: ${SECONDS} s"
grep -q "the cluster has no GPUs configured (sinfo -o %G: (null)): elements ask for no GPU" "$WORK/gpu.log" ||
  fail "the GPU run did not say it asks for no GPU: $(cat "$WORK/gpu.log")"
grep -q "^| level1/mask_not | level1 | no GPU: verification needs one |" "$WORK/gpu/results.md" ||
  fail "the GPU run's row: $(cat "$WORK/gpu/results.md")"
grep -q '"node": "localhost"' "$WORK/gpu/results.json" || fail "the GPU run's results.json does not name the node"

# score --batch: an honest candidate and a cheat (a blank line between), without a GPU: the verdicts
# say needs_gpu, the cheat's guards still find it.
SECONDS=0
for c in honest/elementwise_chain adversarial/try_except_fallback.py; do
  printf '{"id": "%s", "reference": "examples/elementwise_chain.py", "candidate": "tests/harness/%s"}\n\n' "$c" "$c"
done >"$WORK/rows.jsonl"
# `CMD --batch` over the rows, locally into $WORK/NAME-local.jsonl and as a Slurm array into NAME-slurm.jsonl.
local_and_slurm() {
  local cmd=$1 name=$2 where
  for where in local slurm; do
    "$BIN" "$cmd" --batch "$WORK/rows.jsonl" --python "$PY" --log-level warning --out "$WORK/$name-$where.jsonl" \
      $([ $where = slurm ] && echo --slurm) 2>"$WORK/$cmd-$where.log" ||
      fail "$cmd --batch ($where): $(cat "$WORK/$cmd-$where.log")"
  done
  echo "$cmd --batch, locally and on Slurm: ${SECONDS} s"
}
local_and_slurm score scores
"$PY" - "$WORK/scores-local.jsonl" "$WORK/scores-slurm.jsonl" <<'EOF' || fail "the Slurm run's scores differ"
import json, sys
def lines(path):
    return sorted((json.loads(l) for l in open(path)), key=lambda j: j["row"])
local, slurm = lines(sys.argv[1]), lines(sys.argv[2])
assert [j["row"] for j in slurm] == [0, 2], slurm
for a, b in zip(local, slurm):
    assert (a.get("reward"), a.get("verdictStatus"), a.get("error")) == (b.get("reward"), b.get("verdictStatus"), b.get("error")), (a, b)
    assert b["slurm"]["node"] == "localhost", b
EOF
# verify --batch, the same rows: the same verdicts locally and as an array, each line naming its node.
SECONDS=0
local_and_slurm verify verdicts
"$PY" - "$WORK/verdicts-local.jsonl" "$WORK/verdicts-slurm.jsonl" <<'EOF' || fail "the Slurm run's verdicts differ"
import json, sys
def lines(path):
    return sorted((json.loads(l) for l in open(path)), key=lambda j: j["row"])
def checks(j):
    return sorted(f["check"] for f in j.get("findings", []))
local, slurm = lines(sys.argv[1]), lines(sys.argv[2])
assert [j["row"] for j in slurm] == [0, 2], slurm
assert [j["status"] for j in local] == ["needs_gpu", "failed"], local
assert "try_except_fallback" in checks(local[1]), local[1]
for a, b in zip(local, slurm):
    assert (a["status"], checks(a), a["id"]) == (b["status"], checks(b), b["id"]), (a, b)
    assert b["slurm"]["node"] == "localhost", b
EOF
echo "PASS"
