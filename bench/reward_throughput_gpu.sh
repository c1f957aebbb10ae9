#!/usr/bin/env bash
# Issue 33's 4-GPU measurement in one command on the GPU machine (after bench/reward_throughput_carry.sh here):
# builds the host with the carried cpp-httplib into build-gpu-reward (its own folder: a build-gpu configured
# without cpp-httplib keeps that answer cached), checks the binary finds its libraries and has serve-reward, then
# bench/reward_throughput.py scores 40 candidates (10 tasks, groups of 4) by score --batch on 1 and 4 GPUs and by
# serve-reward on 4, baselines warmed first. Results (results.json, results.md, logs, scores) go to ${OUT:-bench/results/out};
# arguments go to reward_throughput.py (e.g. --service-gpus 1 4). About 7 minutes on four H100s.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT_DIR="${OUT:-bench/results/out}"
R=$PWD/.carry/httplib/root
mkdir -p "$OUT_DIR"
if [ ! -f "$R/usr/include/httplib.h" ] || [ ! -d .carry/reward_candidates ]; then
  echo "missing .carry/httplib or .carry/reward_candidates: run bench/reward_throughput_carry.sh first and carry .carry" >&2
  exit 2
fi
start=$SECONDS
# Only cpp-httplib is looked up by pkg-config, so its .pc alone is visible, under the carried root.
PKG_CONFIG_SYSROOT_DIR=$R PKG_CONFIG_LIBDIR=$R/usr/lib/x86_64-linux-gnu/pkgconfig \
  cmake -S . -B build-gpu-reward -G Ninja -DSTITCH_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS="-isystem $R/usr/include/x86_64-linux-gnu" > "$OUT_DIR/build.log" 2>&1
ninja -C build-gpu-reward stitchcuda >> "$OUT_DIR/build.log" 2>&1 || { tail -30 "$OUT_DIR/build.log"; exit 2; }
bin=build-gpu-reward/bin/stitchcuda
if ldd "$bin" | grep "not found"; then echo "the host misses the libraries above" >&2; exit 2; fi
"$bin" serve-reward --help > /dev/null || { echo "this build has no serve-reward: see $OUT_DIR/build.log" >&2; exit 2; }
echo "host built in $((SECONDS - start)) s"
# The deadline keeps the last run inside a 10-minute command; a run not started is said, the others kept.
# The rows' candidates and the jobs (thousands of files) stay in build-gpu-reward/run; OUT_DIR gets the results,
# and runs.tar.gz: the logs and each run's scores (per row: its verdict, GPU and stage times).
work=build-gpu-reward/run
rm -rf "$work"
python3 bench/reward_throughput.py --from-candidates .carry/reward_candidates --limit 40 --per-task 4 --warm \
  --batch-gpus 1 4 --service-gpus 4 --deadline $((440 - SECONDS)) --binary "$bin" --out "$work" "$@"
# The results as files, the logs and per-row scores in one archive: a device machine brings back 8 files at most.
cp "$work"/*.json "$work"/*.md "$OUT_DIR"/ 2> /dev/null || true
out_abs=$(cd "$OUT_DIR" && pwd)
(cd "$work" && tar -czf "$out_abs/runs.tar.gz" -- *.log *.jsonl 2> /dev/null) || true
cat "$OUT_DIR/results.md"
