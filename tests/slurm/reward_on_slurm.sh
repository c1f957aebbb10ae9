#!/bin/bash
# `serve-reward --slurm` on a one-node Slurm cluster started here (cluster.sh): two long-lived worker jobs
# connect back; 24 concurrent requests (verify and score, without a GPU: the verdicts say needs_gpu) are
# each answered once, with their own id, while one worker's job is cancelled mid-run (scancel): its request
# runs again on the other worker, a replacement job is submitted and connects, /v1/metrics counts the loss;
# after SIGTERM no job of the service is left in the queue.
# Usage: reward_on_slurm.sh STITCHCUDA PYTHON SOURCE_DIR. Exit 0 pass, 1 fail, 77 skipped (says why).
set -u
BIN=$1 PY=$2 SRC=$3
cd "$SRC" || exit 1  # the requests name the repository's files relative to it
CLUSTER=$(mktemp -d /tmp/stitch-slurm-test.XXXXXX)
. "$SRC/tests/slurm/cluster.sh"
WORK=$CLUSTER/test
mkdir -p "$WORK"
service=""
trap '[ -n "$service" ] && kill -9 "$service" 2>/dev/null; stop_cluster; rm -rf "$CLUSTER"' EXIT

fail() {
  echo "FAIL: $*" >&2
  tail -n 30 "$WORK/service.log" >&2
  exit 1
}

"$BIN" serve-reward --port 0 --slurm --jobs 2 --python "$PY" --root "$SRC" --jobs-dir "$WORK/jobs" \
  >"$WORK/service.out" 2>"$WORK/service.log" &
service=$!
for _ in $(seq 100); do grep -q "^listening on " "$WORK/service.out" && break; sleep 0.2; done
url=$(sed -n 's/^listening on //p' "$WORK/service.out")
[ -n "$url" ] || fail "serve-reward --slurm did not listen"

SECONDS=0
"$PY" "$SRC/tests/slurm/reward_clients.py" "$url" wait-workers 2 180 || fail "the two worker jobs did not connect"
echo "two worker jobs connected: ${SECONDS} s"

# 24 requests at once; once both workers run one, the job of the first busy one is cancelled.
SECONDS=0
"$PY" "$SRC/tests/slurm/reward_clients.py" "$url" requests 24 >"$WORK/answers.json" 2>"$WORK/clients.log" &
clients=$!
victim=""
for _ in $(seq 400); do
  victim=$("$PY" "$SRC/tests/slurm/reward_clients.py" "$url" busy-job 2>/dev/null) && [ -n "$victim" ] && break
  sleep 0.1
done
[ -n "$victim" ] || fail "no worker was ever busy"
scancel "$victim"
wait "$clients" || fail "the clients: $(cat "$WORK/clients.log")"
echo "24 requests, worker job $victim cancelled under one: ${SECONDS} s"
grep -q "Slurm worker $victim (seat [0-9]) lost: " "$WORK/service.log" || fail "the service did not notice $victim was lost"
grep -q "the request runs again on another worker" "$WORK/service.log" ||
  fail "the request of the cancelled worker $victim was not run again"
"$PY" "$SRC/tests/slurm/reward_clients.py" "$url" wait-workers 2 180 || fail "no replacement job connected"
"$PY" "$SRC/tests/slurm/reward_clients.py" "$url" check-metrics 24 || fail "the metrics"

kill -TERM "$service"
wait "$service"
code=$?
service=""
[ "$code" = 143 ] || fail "serve-reward exited $code at SIGTERM"
[ -z "$(squeue -h)" ] || fail "jobs left in the queue after the service stopped: $(squeue -h)"
grep -E "lost: |runs again|connected from|Slurm worker job|refused" "$WORK/service.log"
echo "PASS"
