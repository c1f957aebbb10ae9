"""Each GPU kernel of eager PyTorch and of a candidate, per forward, under torch.profiler: where a
task's time goes, kernel by kernel, and which of eager's kernels a candidate replaced. The
candidate folder holds candidate.cu and model_new.py per task, as `generate_candidates DIR`
writes them.
    python3 bench/kernel_breakdown.py CANDIDATES_DIR TASK [TASK ...]"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from stitchcuda_harness.nvcc_build import Builder  # noqa: E402

import task_and_candidate  # noqa: E402

REPS = 10


def per_kernel_us(fn, inputs):
    fn(*inputs)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(REPS):
            fn(*inputs)
        torch.cuda.synchronize()
    times = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            times[e.name[:80]] = times.get(e.name[:80], 0.0) + e.device_time / REPS
    return times


def main():
    cands, names = sys.argv[1], sys.argv[2:]
    builder = Builder("/tmp/stitchcuda-kernel-breakdown")
    print(f"{torch.cuda.get_device_name()}, PyTorch {torch.__version__}, {REPS} forwards each, µs per forward")
    for name in names:
        tm, model, cand, built = task_and_candidate.load(cands, name, builder)
        if cand is None:
            print(f"\n## {name}: candidate build failed: {built.diagnostics[:2]}")
            continue
        inputs = [x.cuda() for x in tm.get_inputs()]
        with torch.no_grad():
            rows = {"eager": per_kernel_us(model, inputs), "candidate": per_kernel_us(cand, inputs)}
        print(f"\n## {name}\n\n| | kernel | µs |\n|---|---|---|")
        for who, times in rows.items():
            for k, us in sorted(times.items(), key=lambda kv: -kv[1]):
                print(f"| {who} | `{k}` | {us:.1f} |")
            print(f"| {who} | **total** | **{sum(times.values()):.1f}** |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
