"""Each GPU kernel of eager PyTorch, of torch.compile (default mode) and of a candidate, per forward,
under torch.profiler: where a task's time goes, kernel by kernel, which of eager's kernels a
candidate replaced, and what Inductor runs instead (its convolution's layout, its fused tails).
Candidates come from a folder of suite candidates (`generate_candidates DIR`), or from a bench's
results (each verified task's best candidate, found as bench/kernelbench_exports.py finds it).
    python3 bench/kernel_breakdown.py CANDIDATES_DIR TASK [TASK ...]
    python3 bench/kernel_breakdown.py --results RESULTS --tasks TASK_ROOT [TASK ...]   (all verified if none)"""
import argparse
import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from stitchcuda_harness.nvcc_build import Builder  # noqa: E402

import kernelbench_exports  # noqa: E402
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


def from_results(results, root, names):
    """(task name, task file, candidate folder or None, why) per verified task of a bench's results."""
    doc, results_dir = kernelbench_exports.load_results(results)
    for row in doc["results"]:
        if (names and row["task"] not in names) or not row.get("best"):
            continue
        cand, why = kernelbench_exports.candidate_dir(row, results_dir)
        yield row["task"], os.path.join(root, row["task"] + ".py"), cand, why


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cands", nargs="?", help="a folder of suite candidates (generate_candidates DIR)")
    ap.add_argument("names", nargs="*", help="tasks (suite names, or level/name with --results)")
    ap.add_argument("--results", help="a bench's results folder: its verified tasks' best candidates")
    ap.add_argument("--tasks", default="bench/tasks", help="where --results' tasks are")
    args = ap.parse_args()
    if args.results:
        names = ([args.cands] if args.cands else []) + args.names
        work = list(from_results(args.results, args.tasks, names))
    else:
        work = [(n, glob.glob(f"bench/tasks/level*/{n}.py")[0], f"{args.cands}/{n}", "") for n in args.names]
    builder = Builder("/tmp/stitchcuda-kernel-breakdown")
    print(f"{torch.cuda.get_device_name()}, PyTorch {torch.__version__}, {REPS} forwards each, µs per forward")
    for name, task_file, cand_dir, why in work:
        if cand_dir is None:
            print(f"\n## {name}: no candidate: {why}")
            continue
        tm, model, cand, built = task_and_candidate.load_files(task_file, cand_dir, builder, as_built=bool(args.results))
        if cand is None:
            print(f"\n## {name}: candidate build failed: {built.diagnostics[:2]}")
            continue
        inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in tm.get_inputs()]
        with torch.no_grad():
            rows = {"eager": per_kernel_us(model, inputs), "torch.compile": per_kernel_us(torch.compile(model), inputs),
                    "candidate": per_kernel_us(cand, inputs)}
        print(f"\n## {name}\n\n| | kernel | µs |\n|---|---|---|")
        for who, times in rows.items():
            for k, us in sorted(times.items(), key=lambda kv: -kv[1]):
                print(f"| {who} | `{k}` | {us:.1f} |")
            print(f"| {who} | **total** | **{sum(times.values()):.1f}** |")
        del model, cand, inputs
        torch.compiler.reset()
        torch.cuda.empty_cache()
        sys.stdout.flush()


if __name__ == "__main__":
    main()
