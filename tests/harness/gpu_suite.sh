#!/usr/bin/env bash
# The harness's GPU suite, one device call: environment facts, the unit tests under the machine's
# PyTorch, the GPU suite (honest, adversarial, crash/hang recovery, methods), and the
# verify-turnaround benchmark. Everything lands under $OUT (at most 8 files, see the device notes).
# Usage (repository root): OUT=/some/dir bash tests/harness/gpu_suite.sh
set -u
OUT=${OUT:-/tmp/stitchcuda-gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=harness
STAMP=$(date -u +%Y-%m-%dT%H:%M:%SZ)
{
  echo "date: $STAMP"
  echo "command: OUT=\$OUT bash tests/harness/gpu_suite.sh"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -1
  python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "gpu", torch.cuda.get_device_name(0))'
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
echo "== unit tests (python3 -m unittest discover -s tests/harness -t .)"
timeout 120 python3 -m unittest discover -s tests/harness -t . > "$OUT/unittest.log" 2>&1; echo "unittest rc=$?" | tee -a "$OUT/unittest.log"
tail -5 "$OUT/unittest.log"
echo "== GPU suite"
timeout 240 python3 tests/harness/gpu_suite.py "$OUT/gpu_suite.json" 2> "$OUT/gpu_suite.stderr.log"; echo "gpu_suite rc=$?"
echo "== verify-turnaround benchmark"
timeout 220 python3 bench/verify_turnaround.py --out "$OUT" --reps 5 2> "$OUT/bench.stderr.log"; echo "bench rc=$?"
tail -c 20000 "$OUT/gpu_suite.stderr.log" > "$OUT/stderr_tail.log"; tail -c 10000 "$OUT/bench.stderr.log" >> "$OUT/stderr_tail.log"
rm -f "$OUT/gpu_suite.stderr.log" "$OUT/bench.stderr.log"
ls -la "$OUT"
