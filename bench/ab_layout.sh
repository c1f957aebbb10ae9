#!/usr/bin/env bash
# The memory format of convolution networks measured, not guessed: the same problems run through
# bench/run_selected.sh once per layout mode (`--layout auto`, where the refine step tries the other
# format after the first verified candidate; `nchw` and `channels_last`, which fix it), and
# bench/ab_layout_table.py prints the side-by-side table and writes ab_layout.md / ab_layout.json.
#   TASK_ROOT=../shared/kernelbench SAVE=$OUT bash bench/ab_layout.sh
# SEL picks the problems (default: the convolutions with tails of level 2, level1/64 and three level-3
# networks); MODES the modes, in order (one call per mode fits a 10-minute machine: MODES=nchw ...,
# the results of earlier calls found under RESULTS are kept); BENCH_ARGS more options for the bench.
set -uo pipefail
cd "$(dirname "$0")/.."
base=${RESULTS:-build-gpu/ab_layout}
sel=${SEL:-"level2/5_* level2/17_* level2/32_* level2/52_* level2/67_* level2/85_* level2/93_* level1/64_* \
level3/6_* level3/25_* level3/27_*"}
for mode in ${MODES:-auto nchw channels_last}; do
  echo "== --layout $mode"
  RESULTS="$base/$mode" SEL="$sel" LIMIT="${LIMIT:-560}" DEADLINE="${DEADLINE:-420}" TIMEOUT="${TIMEOUT:-100}" \
    BENCH_ARGS="--gpus ${GPUS:-4} --ncu-runs 0 --layout $mode ${BENCH_ARGS:-}" SAVE= bash bench/run_selected.sh | tail -3
done
python3 bench/ab_layout_table.py "$base" ${SAVE:+--save "$SAVE"}
