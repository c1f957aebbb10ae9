#!/usr/bin/env bash
# The first candidate of 22 level-2 convolution problems in each layout (--layout nchw, then
# channels_last), on one warm machine: run from a snapshot of the tree (.snap) with the problems in ../.kb.
set -uo pipefail
SEL=""
for n in 17 21 25 31 32 35 46 4 52 54 57 65 67 69 71 73 82 85 87 92 5 93; do SEL="$SEL level2/${n}_*"; done
for lay in nchw channels_last; do
  RESULTS=../build-gpu-snap/ab_$lay TASK_ROOT=../.kb SEL="$SEL" WARM=16 LIMIT=280 DEADLINE=230 TIMEOUT=60 \
    BENCH_ARGS="--gpus 4 --ncu-runs 0 --iterations 1 --layout $lay" bash bench/run_selected.sh | tail -30
  mkdir -p $OUT/$lay && cp ../build-gpu-snap/ab_$lay/results.json ../build-gpu-snap/ab_$lay/results.md $OUT/$lay/ 2>/dev/null
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
python3 -c "import torch;print(torch.__version__)"
