#!/usr/bin/env bash
# The GPU run of the built-in optimizer suite in one command on the device machine: warm
# torch.compile's cache in parallel while the host builds (no tests), then run the tasks one at
# a time with bench/run_builtin_suite.py. Results go to ${OUT:-bench/results/out}; WARM=0 skips the
# warm-up (a resumed run on the same machine finds the cache warm).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT_DIR="${OUT:-bench/results/out}"
mkdir -p "$OUT_DIR"
python3 bench/run_builtin_suite.py --out "$OUT_DIR" --warm "${WARM:-12}" --warm-only "$@" > "$OUT_DIR/warm.log" 2>&1 &
warm=$!
cmake -S . -B build-gpu -G Ninja -DSTITCH_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=Release > "$OUT_DIR/build.log" 2>&1
ninja -C build-gpu stitchcuda >> "$OUT_DIR/build.log" 2>&1
wait "$warm" || echo "warm-up failed; see warm.log"
python3 bench/run_builtin_suite.py --binary build-gpu/bin/stitchcuda --out "$OUT_DIR" --work /tmp/builtin-suite "$@"
