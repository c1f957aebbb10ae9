"""KernelBench's contract over every fixture's generated candidate (design §6): built under one
seed, ModelNew and the task's Model hold the same parameters and buffers, bit for bit, with
nothing copied — ModelNew constructs itself as Model does. Runs on the CPU: the compiled library
is not needed to construct the model, so `__stitch_library__` is a stand-in that refuses calls.
Fails naming each candidate whose state differs, with the first entry that does."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "harness"))
import torch  # noqa: E402

from stitchcuda_harness.module_loader import load_module  # noqa: E402
from stitchcuda_harness.task_loader import load_task  # noqa: E402


class _NoLibrary:
    def forward(self, *_tensors):
        raise RuntimeError("construction test: the compiled library is not loaded")

    segment = forward


def first_difference(a: torch.nn.Module, b: torch.nn.Module) -> str | None:
    sa, sb = a.state_dict(), b.state_dict()
    if list(sa) != list(sb):
        return f"keys differ: {sorted(set(sa) ^ set(sb))[:4] or 'order'}"
    for k in sa:
        if sa[k].dtype != sb[k].dtype or sa[k].shape != sb[k].shape or not torch.equal(sa[k], sb[k]):
            return f"{k} differs"
    return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--generator", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    gen = subprocess.run([args.generator, args.out], capture_output=True, text=True)
    sources = [line for line in gen.stdout.splitlines() if line.endswith(".cu") and "." not in os.path.basename(os.path.dirname(line))]
    problems = []
    for src in sources:
        folder = os.path.dirname(src)
        name = os.path.basename(folder)
        with open(os.path.join(ROOT, "tests", "fixtures", "graphs", name + ".json")) as f:
            task_file = os.path.join(ROOT, json.load(f)["task"])
        task = load_task(task_file)
        reference = task.instantiate(torch.device("cpu"), 42)
        init = task.init_inputs(42)
        torch.manual_seed(42)
        module = load_module(os.path.join(folder, "model_new.py"), "candidate", {"__stitch_library__": _NoLibrary()})
        candidate = module.ModelNew(*init)
        why = first_difference(reference, candidate)
        if why:
            problems.append(f"{name}: {why}")
    for p in problems:
        print("FAIL", p)
    print(f"{len(sources) - len(problems)} passed, {len(problems)} failed")
    return 1 if problems or not sources else 0


if __name__ == "__main__":
    sys.exit(main())
