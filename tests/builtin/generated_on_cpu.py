"""Runs generated candidates on the CPU against their task's Model: candidate.cu compiled as plain
C++ (cpu_cuda/cuda_runtime.h stands in for the CUDA runtime; each `kernel<V><<<grid, block, 0,
stream>>>(args)` becomes a call of sc_cpu_launch, which runs the threads of each block as fibers
that meet at barriers and shuffles) into a library that ModelNew calls with host pointers, as it
calls the real one with device pointers. The launchers, the layout checks, the segments and every
index expression of the kernels run on real data: strided reads of views, writes into slices of a
concatenation, pieces chosen by coordinate, row and column reductions with their block and warp
combines, rows split across blocks. Needs a C++ compiler and PyTorch, no GPU and no nvcc.

Candidates with library calls cannot run so; each fixture runs in a child process, and one whose
threads deadlock aborts and fails, saying so. Fails naming each fixture whose outputs differ from
the Model's, with the largest difference. The last of the three runs plants NaNs in
the inputs: where PyTorch's ops keep a NaN, the kernels must too. A candidate whose program takes
the rows of each call (RuntimeRows.h) also runs on fewer, one, and more rows than were captured; with
--max-rows R it runs on the first R rows throughout (then fewer, one and more than R), which bounds the
work of the full-size fixtures (the long run, `ctest -L long`, takes them at their captured batch)."""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "harness"))

LAUNCH = re.compile(r"(\w+<\d+>)<<<([^,]+), ([^,]+), 0, stream>>>\(([^;]*)\);")


def build(source: str, cxx: str, variant: str) -> tuple[str, str]:
    """The CPU library of `source`, or the compiler's complaint. Variant "scalar" launches every
    kernel with VEC 1 (the path of unaligned pointers), "vector" as the launchers choose (16-byte
    accesses: PyTorch's CPU allocations are aligned)."""
    folder = os.path.dirname(source)
    with open(source) as f:
        text = LAUNCH.sub(r"sc_cpu_launch(\1, \2, \3, \4);", f.read())
    if variant == "scalar":
        text = re.sub(r"sc_cpu_launch\((\w+)<4>", r"sc_cpu_launch(\1<1>", text)
    cpu = os.path.join(folder, f"candidate_{variant}.cpp")
    with open(cpu, "w") as f:
        f.write(text)
    library = os.path.join(folder, f"libcandidate_{variant}.so")
    cmd = [cxx, "-std=c++17", "-O1", "-w", "-shared", "-fPIC", "-I", os.path.join(HERE, "cpu_cuda"),
           "-I", os.path.join(ROOT, "harness", "stitchcuda_harness", "include"), cpu, "-o", library]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return library, "" if p.returncode == 0 else " ".join(cmd) + "\n" + "\n".join((p.stdout + p.stderr).splitlines()[:20])


def outputs(value) -> list:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def compare(name: str, folder: str, library: str, max_rows: int | None = None) -> str:
    """Runs one fixture's candidate against its Model (in this process); '' when they agree."""
    import torch

    from stitchcuda_harness.module_loader import load_module
    from stitchcuda_harness.task_loader import load_task

    with open(os.path.join(ROOT, "tests", "fixtures", "graphs", name + ".json")) as f:
        task = load_task(os.path.join(ROOT, json.load(f)["task"]))
    cpu = torch.device("cpu")
    reference = task.instantiate(cpu, 42)
    init = task.init_inputs(42)
    torch.manual_seed(42)
    module = load_module(os.path.join(folder, "model_new.py"), "candidate", {"__stitch_library__": library})
    candidate = module.ModelNew(*init)
    with open(os.path.join(folder, "candidate.cu")) as f:
        any_rows = "kPerRow" in f.read()
    # A program that takes the rows of each call runs on the first max_rows rows: the same kernels, index
    # arithmetic and launchers on real data, at a cost that does not grow with the captured batch.
    rows_taken = max_rows if any_rows and max_rows else None
    for seed in (1, 2, 3):  # twice: the second call finds the segment prepared; the third with NaNs
        inputs = task.inputs(seed, cpu)
        if rows_taken:
            inputs = [t[:rows_taken].clone() if isinstance(t, torch.Tensor) else t for t in inputs]
        if seed == 3:  # every seventh element of each floating input NaN: PyTorch's ops keep them
            inputs = [t.clone().view(-1).index_fill_(0, torch.arange(0, t.numel(), 7), float("nan")).view(t.shape)
                      if isinstance(t, torch.Tensor) and t.is_floating_point() and t.is_contiguous() else t
                      for t in inputs]
        with torch.no_grad():
            want = outputs(reference(*[t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]))
            got = outputs(candidate(*[t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]))
        if len(want) != len(got):
            return f"{len(got)} output(s), the Model returns {len(want)}"
        for i, (w, g) in enumerate(zip(want, got)):
            if w.shape != g.shape:
                return f"output {i} has shape {tuple(g.shape)}, the Model's {tuple(w.shape)}"
            if not torch.allclose(g, w, rtol=1e-5, atol=1e-5, equal_nan=seed == 3):
                worst = (g - w).abs().nan_to_num(float("inf")).max().item()
                return f"output {i} differs from the Model's by up to {worst:g} (seed {seed})"
    if any_rows:  # a program that takes the rows of each call: fewer, one, and more than captured (or taken)
        inputs = task.inputs(4, cpu)
        if rows_taken:
            inputs = [t[:rows_taken].clone() if isinstance(t, torch.Tensor) else t for t in inputs]
        captured = next(t.shape[0] for t in inputs if isinstance(t, torch.Tensor))
        for rows in (captured - 1, 1, captured + 3):
            taken = [torch.cat([t] * (rows // captured + 1))[:rows].clone() if isinstance(t, torch.Tensor) else t
                     for t in inputs]
            with torch.no_grad():
                want = outputs(reference(*[t.clone() if isinstance(t, torch.Tensor) else t for t in taken]))
                got = outputs(candidate(*taken))
            for i, (w, g) in enumerate(zip(want, got)):
                if w.shape != g.shape or not torch.allclose(g, w, rtol=1e-5, atol=1e-5):
                    return f"output {i} at {rows} rows differs from the Model's (shape {tuple(g.shape)})"
    return ""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--generator")
    ap.add_argument("--out", required=True)
    ap.add_argument("--cxx", default="c++")
    ap.add_argument("--run", nargs=2, metavar=("FIXTURE", "LIBRARY"),
                    help="internal: compare one fixture's candidate, built as LIBRARY, in this process")
    ap.add_argument("--max-rows", type=int, default=None,
                    help="run a candidate that takes the rows of each call on at most this many rows")
    ap.add_argument("fixtures", nargs="*")
    args = ap.parse_args()
    if args.run:
        name, library = args.run
        why = compare(name, os.path.join(args.out, name), library, args.max_rows)
        print(why)
        return 1 if why else 0
    gen = subprocess.run([args.generator, args.out], capture_output=True, text=True)
    failed = 0
    for name in args.fixtures:
        source = os.path.join(args.out, name, "candidate.cu")
        if not os.path.exists(source):
            print(f"FAIL {name}: no candidate was generated\n{gen.stderr}")
            failed += 1
            continue
        for variant in ("vector", "scalar"):
            library, error = build(source, args.cxx, variant)
            if error:
                print(f"FAIL {name}: does not compile as C++\n{error}")
                failed += 1
                break
            rows = ["--max-rows", str(args.max_rows)] if args.max_rows else []
            p = subprocess.run([sys.executable, __file__, "--out", args.out, *rows, "--run", name, library],
                               capture_output=True, text=True)
            if p.returncode != 0:
                why = p.stdout.strip() or (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
                print(f"FAIL {name} ({variant} accesses): {why}")
                failed += 1
                break
        else:
            print(f"ok   {name}")
    print(f"{len(args.fixtures) - failed} candidate(s) agree with their Model on the CPU, {failed} failed")
    return 1 if failed or not args.fixtures else 0


if __name__ == "__main__":
    sys.exit(main())
