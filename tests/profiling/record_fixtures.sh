#!/usr/bin/env bash
# Records the profiling fixtures and runs the GPU part of the profiling suite, in one device call:
# machine facts; the harness side (measureCeilings, profileTrace of a small model and of a
# fast-path candidate, profileReference) through the worker's method table; then the real C++
# NcuRunner (built here with g++: the GPU machine has no GoogleTest) on a memory-bound candidate
# kernel, a compute-bound SGEMM and the small model, with roofline classes and the Verifier's
# feedback. Fixtures land in $OUT/fixtures.tar.gz; the report in $OUT/gpu_profile_report.json.
# Usage (repository root): OUT=/some/dir bash tests/profiling/record_fixtures.sh
set -u
OUT=${OUT:-/tmp/stitchcuda-profiling-out}
FIX=/tmp/stitch-profiling-fixtures
CACHE=/tmp/stitch-cache
mkdir -p "$OUT" "$FIX" "$CACHE"
export PYTHONUNBUFFERED=1
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "command: OUT=\$OUT bash tests/profiling/record_fixtures.sh"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -1
  ncu --version | tail -1
  command -v nsys || echo "nsys: not on PATH"
  python3 -c 'import torch, sys; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, "gpu", torch.cuda.get_device_name(0))'
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

echo "== build the probe (g++)"
g++ -std=c++20 -O1 -I. process/*.cpp profiling/*.cpp tests/profiling/gpu_profile_probe.cpp -o /tmp/gpu_profile_probe 2>&1 | tail -20

echo "== harness fixtures (record_traces.py)"
timeout 150 python3 tests/profiling/record_traces.py "$FIX" "$CACHE" 2> "$FIX/record_traces.stderr.log"; echo "record_traces rc=$?"

echo "== Nsight Compute through NcuRunner (gpu_profile_probe)"
timeout 300 /tmp/gpu_profile_probe --out "$FIX" --harness harness --ceilings "$FIX/ceilings.json" --cache-dir "$CACHE" \
  memory_bound=examples/elementwise_chain.py,tests/harness/honest/elementwise_chain \
  compute_bound=tests/profiling/fixtures/tasks/sgemm.py \
  small_convnet=tests/profiling/fixtures/tasks/small_convnet.py \
  > "$OUT/gpu_profile_report.json" 2> "$FIX/probe.stderr.log"; echo "probe rc=$?"
python3 - "$OUT/gpu_profile_report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for t in r["tools"]: print(f"{t['name']}: {t['message']}")
print("ceilings:", r.get("ceilings"))
print("missing profiler:", r["missingProfiler"]["code"], "|", r["missingProfiler"]["noticeAgain"])
for c in r["cases"]:
    print(f"-- {c['name']} ok={c['ok']} {c['seconds']:.1f}s {c.get('error', '')}")
    for k in c.get("kernels", []):
        rf = k.get("roofline", {})
        print(f"   {k['name'][:60]:60s} {k['durationUs']} us dram {k['dramPct']} sm {k['smPct']} occ {k['achievedOccupancyPct']} "
              f"lim {k['occupancyLimiter']} regs {k['registersPerThread']} -> {rf.get('bound')} {rf.get('achievedPct')}")
    if "feedback" in c: print("   feedback:", c["feedback"]["category"], "|", c["feedback"]["diagnosis"])
PY

# If the NVTX filter matched nothing, record how ncu reads the range so the runner can be fixed.
if grep -q '"no_kernels"' "$OUT/gpu_profile_report.json"; then
  for inc in "stitchcuda.forward/" "stitchcuda.forward"; do
    echo "== ncu --nvtx-include '$inc'" >> "$FIX/nvtx_probe.txt"
    PYTHONPATH=harness timeout 60 ncu --nvtx --nvtx-include "$inc" --metrics gpu__time_duration.sum --csv \
      python3 -m stitchcuda_harness.ncu_target --task tests/profiling/fixtures/tasks/sgemm.py >> "$FIX/nvtx_probe.txt" 2>&1
  done
fi
ncu --query-metrics --chip gh100 2>/dev/null | grep -E '^(dram__bytes|smsp__average_warps_issue_stalled_long|sm__pipe_tensor|sm__pipe_fma|smsp__sass_thread_inst_executed_op_ffma)' > "$FIX/ncu_metric_names.txt" 2>&1
cp "$FIX/record_traces.stderr.log" "$FIX/probe.stderr.log" "$OUT/" 2>/dev/null
tar -czf "$OUT/fixtures.tar.gz" -C "$FIX" --exclude='*.stderr.log' .
ls -la "$OUT" "$FIX"
