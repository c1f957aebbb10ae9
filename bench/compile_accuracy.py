#!/usr/bin/env python3
"""Whether torch.compile's output would pass the verifier's tolerance: per task, eager's and
torch.compile's outputs (PyTorch's default flags, as the bench times them) against each other at
KernelBench's atol = rtol = 1e-4, each against an fp64 truth (the model and inputs in double), and
torch.compile's output by the verifier's own rule (harness tolerance.compare_with_truth: within 1e-4 of
eager, or no further from the truth than eager's worst error plus the tolerance), as a candidate is judged.
A speedup over torch.compile is read against a baseline that may itself be off: Inductor lays
convolutions out channels-last, where cuDNN may pick TF32 kernels that eager's NCHW choice did not.
  python3 bench/compile_accuracy.py TASKS... --gpus 4 --out DIR
Writes DIR/results.json and DIR/results.md (a table, one row per task)."""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import queue
import subprocess
import sys

CHECK = r"""
import importlib.util, json, sys, torch
sys.path.insert(0, sys.argv[2])
from stitchcuda_harness.tolerance import compare_with_truth
spec = importlib.util.spec_from_file_location("task", sys.argv[1]); m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
torch.manual_seed(0)
model = m.Model(*m.get_init_inputs()).cuda().eval()
torch.manual_seed(1)
inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in m.get_inputs()]
def first(out):
    return out[0] if isinstance(out, (tuple, list)) else out
with torch.no_grad():
    eager = first(model(*inputs)).float()
    compiled = first(torch.compile(model)(*inputs)).float()
    model.double()
    truth = first(model(*[x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                          for x in inputs]))
def outside(a, b):
    return int((~torch.isclose(a.double(), b.double(), atol=1e-4, rtol=1e-4)).sum())
print(json.dumps({
    "elements": eager.numel(),
    "compile_outside_vs_eager": outside(compiled, eager),
    "eager_err_vs_fp64": float((eager.double() - truth).abs().max()),
    "compile_err_vs_fp64": float((compiled.double() - truth).abs().max()),
    "compile_passes_verifier": compare_with_truth(compiled, eager, truth, 1e-4, 1e-4).passed,
}))
"""


HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness")


def check(task: str, gpu: int, python: str, timeout: float) -> dict:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu))
    row = {"task": "/".join(task.split(os.sep)[-2:])[:-3]}
    try:
        r = subprocess.run([python, "-c", CHECK, task, HARNESS], capture_output=True, text=True, timeout=timeout, env=env)
        lines = r.stdout.strip().splitlines()
        if r.returncode == 0 and lines:
            row.update(json.loads(lines[-1]))
        else:
            row["error"] = (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1][:200]
    except subprocess.TimeoutExpired:
        row["error"] = f"timed out after {timeout:.0f} s"
    return row


def table(rows: list[dict]) -> str:
    out = ["| task | compile within 1e-4 of eager | elements outside | eager vs fp64 | compile vs fp64 | "
           "compile passes the verifier's rule |", "|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['task']} | error: {r['error']} | | | | |")
            continue
        ok = "yes" if r["compile_outside_vs_eager"] == 0 else "no"
        out.append(f"| {r['task']} | {ok} | {r['compile_outside_vs_eager']}/{r['elements']} | "
                   f"{r['eager_err_vs_fp64']:.2e} | {r['compile_err_vs_fp64']:.2e} | "
                   f"{'yes' if r['compile_passes_verifier'] else 'no'} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="+", help="task files")
    ap.add_argument("--gpus", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--timeout", type=float, default=240.0, help="per task, seconds")
    args = ap.parse_args()
    tasks = sorted(os.path.abspath(t) for t in args.tasks)
    free: queue.Queue[int] = queue.Queue()
    for g in range(args.gpus):
        free.put(g)

    def on_free_gpu(task: str) -> dict:
        gpu = free.get()
        try:
            return check(task, gpu, args.python, args.timeout)
        finally:
            free.put(gpu)

    with concurrent.futures.ThreadPoolExecutor(args.gpus) as pool:
        rows = list(pool.map(on_free_gpu, tasks))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"results": rows}, f, indent=1)
    md = table(rows)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(md + "\n")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
