#!/usr/bin/env bash
# The GPU run of the task suite in one command on the device machine: warm torch.compile's cache in
# parallel while the host builds (no tests), then `stitchcuda bench` runs every task through
# `stitchcuda optimize`, one at a time per GPU. Results go to ${OUT:-bench/results/out}; TASKS picks a
# level folder or one task (default bench/tasks); WARM=0 skips the warm-up (a resumed run on the same
# machine finds the cache warm). Arguments go to `stitchcuda bench`, e.g. --resume, --gpus 2, and on a
# machine that stops commands after 10 minutes `--deadline 420 --timeout 150` (then --resume goes on).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT_DIR="${OUT:-bench/results/out}"
TASKS="${TASKS:-bench/tasks}"
mkdir -p "$OUT_DIR"
warm=""
if [ "${WARM:-12}" != 0 ]; then
  python3 bench/warm_compile.py "$TASKS" --jobs "${WARM:-12}" > "$OUT_DIR/warm.log" 2>&1 &
  warm=$!
fi
cmake -S . -B build-gpu -G Ninja -DSTITCH_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release > "$OUT_DIR/build.log" 2>&1
ninja -C build-gpu stitchcuda >> "$OUT_DIR/build.log" 2>&1
if [ -n "$warm" ]; then wait "$warm" || echo "warm-up failed; see $OUT_DIR/warm.log"; fi
exec build-gpu/bin/stitchcuda bench "$TASKS" --out "$OUT_DIR" "$@"
