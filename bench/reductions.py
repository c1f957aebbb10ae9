"""Reductions at full size against the memory roofline (issue 32): each problem's generated candidates
beside eager and torch.compile, with the bytes the forward must move (every input read once, every output
written once) and the fraction of the GPU's measured copy bandwidth each reaches.

Here (no GPU needed): `python3 bench/reductions.py --generate DIR/LABEL [PROBLEM...]` runs
`stitchcuda optimize` on each problem (full size, the built-in brain) and keeps its candidates as
DIR/LABEL/<problem>/cN/{candidate.cu,model_new.py}. Generate twice with different labels (before and
after a change) to compare them side by side. On the GPU machine, from the repository root:
    python3 bench/reductions.py --candidates DIR --tasks ../shared/kernelbench --out OUT
Every label's candidates are built with the harness's nvcc build, checked against eager (allclose at
1e-4, or the verifier's tolerance per problem) and timed interleaved with eager and torch.compile on the
same inputs (CUDA events, median of --rounds). Writes results.json and results.md into --out.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

from result_files import write_results  # bench/ is on sys.path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEED = 42
# Reductions over a dim, losses, norms and pooling of ../shared/kernelbench (issue 32's list first).
PROBLEMS = [
    "level1/47_Sum_reduction_over_a_dimension", "level1/51_Argmax_over_a_dimension",
    "level1/95_CrossEntropyLoss", "level1/99_TripletMarginLoss", "level1/43_Max_Pooling_3D",
    "level1/49_Max_reduction_over_a_dimension", "level1/52_Argmin_over_a_dimension",
    "level1/53_Min_reduction_over_a_dimension", "level1/24_LogSoftmax", "level1/34_InstanceNorm",
    "level1/35_GroupNorm_", "level1/37_FrobeniusNorm_", "level1/38_L1Norm_", "level1/39_L2Norm_",
    "level1/94_MSELoss", "level1/96_HuberLoss", "level1/98_KLDivLoss",
]


def generate(out: str, problems: list[str], tasks: str) -> None:
    """Each problem's candidates from `stitchcuda optimize` (no GPU: they are planned, generated and
    compiled), copied out of the job folder."""
    host = os.path.join(REPO, "build", "bin", "stitchcuda")
    with tempfile.TemporaryDirectory() as tmp:
        for problem in problems:
            name = os.path.basename(problem)
            jobs = os.path.join(tmp, name)
            cmd = [host, "optimize", os.path.join(tasks, problem + ".py"), "--out", os.path.join(tmp, name + ".out"),
                   "--jobs-dir", jobs, "--load-timeout", "900"]
            done = subprocess.run(cmd, capture_output=True, text=True)
            found = sorted(glob.glob(os.path.join(jobs, "*", "candidates", "c*", "candidate.cu")))
            print(f"{problem}: exit {done.returncode}, {len(found)} candidate(s)", flush=True)
            for cu in found:
                src = os.path.dirname(cu)
                target = os.path.join(out, name, os.path.basename(src))
                os.makedirs(target, exist_ok=True)
                for f in ("candidate.cu", "model_new.py"):
                    shutil.copy(os.path.join(src, f), target)


def median(values: list[float]) -> float:
    s = sorted(values)
    return s[len(s) // 2]


def copy_bandwidth() -> float:
    """Bytes per second of a 1 GiB device-to-device copy (read + write), the roofline's ceiling."""
    import torch

    src = torch.empty(1 << 28, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    times = []
    for _ in range(20):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return 2 * src.numel() * 4 / median(times[5:])


def tensors(x: Any) -> list[Any]:
    return [t for t in (list(x) if isinstance(x, (tuple, list)) else [x]) if hasattr(t, "nbytes")]


def one(args: argparse.Namespace, problem: str, labels: list[str], builder: Any, ceiling: float) -> dict[str, Any]:
    import torch

    from stitchcuda_harness.module_loader import load_module
    from stitchcuda_harness.task_loader import load_task

    name = os.path.basename(problem)
    task = load_task(os.path.join(args.tasks, problem + ".py"))
    device = torch.device("cuda")
    eager = task.instantiate(device, SEED)
    inputs = task.inputs(SEED, device)
    runs: dict[str, Callable[[], Any]] = {"eager": lambda: eager(*inputs)}
    row: dict[str, Any] = {"problem": problem, "why": {}}
    with torch.no_grad():
        want = [t.clone() for t in tensors(eager(*inputs))]
        row["bytes"] = sum(t.nbytes for t in tensors(inputs)) + sum(t.nbytes for t in want)
        compiled = torch.compile(eager)
        compiled(*inputs)
        runs["compile"] = lambda: compiled(*inputs)
        for label in labels:
            for folder in sorted(glob.glob(os.path.join(args.candidates, label, name, "c*"))):
                key = f"{label}/{os.path.basename(folder)}"
                build = builder.build(os.path.join(folder, "candidate.cu"))
                if not build.ok:
                    row["why"][key] = "build failed: " + "; ".join(str(d) for d in build.diagnostics[:2])[:200]
                    continue
                module = load_module(os.path.join(folder, "model_new.py"), key.replace("/", "_"),
                                     {"__stitch_library__": build.library})
                torch.manual_seed(SEED)
                model = module.ModelNew(*task.init_inputs(SEED)).cuda()
                got = tensors(model(*inputs))
                ok = len(got) == len(want) and all(
                    a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=args.atol, rtol=args.atol)
                    for a, b in zip(got, want))
                if not ok:
                    row["why"][key] = "outputs differ from eager"
                    continue
                runs[key] = (lambda m: lambda: m(*inputs))(model)
        times: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(args.rounds):
            for key, f in runs.items():
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                f()
                end.record()
                torch.cuda.synchronize()
                times[key].append(start.elapsed_time(end))
    row["ms"] = {k: round(median(v), 4) for k, v in times.items()}
    row["roofline"] = {k: round(row["bytes"] / (ms / 1e3) / ceiling, 3) for k, ms in row["ms"].items()}
    return row


def markdown(doc: dict[str, Any]) -> str:
    lines = ["# Reductions at full size against the memory roofline", "", f"- date: {doc['date']}",
             f"- GPU: {doc['gpu']}", f"- copy bandwidth (the ceiling): {doc['copy_gbs']} GB/s",
             f"- command: `{doc['command']}`", "",
             "| problem | MB moved | run | ms | % of roofline | vs eager | vs compile |", "|---|---|---|---|---|---|---|"]
    for r in doc["results"]:
        ms = r.get("ms", {})  # absent where the problem itself failed
        for key, t in ms.items():
            lines.append(f"| {r['problem']} | {r['bytes'] / 1e6:.0f} | {key} | {t} | {100 * r['roofline'][key]:.0f}% | "
                         f"{ms['eager'] / t:.2f}x | {ms['compile'] / t:.2f}x |")
        for key, why in r.get("why", {}).items():
            lines.append(f"| {r['problem']} | | {key} | — | — | — | {why} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("problems", nargs="*", help=f"level/name under --tasks (default: {len(PROBLEMS)} reductions)")
    ap.add_argument("--generate", metavar="DIR/LABEL", help="write each problem's candidates into DIR/LABEL")
    ap.add_argument("--candidates", help="the folder holding the labels --generate wrote")
    ap.add_argument("--tasks", default=os.path.join(os.path.dirname(REPO), "shared", "kernelbench"))
    ap.add_argument("--out")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--atol", type=float, default=1e-4)
    args = ap.parse_args()
    problems = args.problems or PROBLEMS
    if args.generate:
        generate(args.generate, problems, args.tasks)
        return 0
    if not args.candidates or not args.out:
        ap.error("--candidates and --out (or --generate)")
    sys.path.insert(0, os.path.join(REPO, "harness"))
    import torch

    from stitchcuda_harness.nvcc_build import Builder

    os.makedirs(args.out, exist_ok=True)
    builder = Builder(os.path.join(args.out, "builds"))
    labels = sorted(d for d in os.listdir(args.candidates) if os.path.isdir(os.path.join(args.candidates, d)))
    ceiling = copy_bandwidth()
    doc: dict[str, Any] = {
        "format": "stitchcuda.reductions/1", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "gpu": f"{torch.cuda.get_device_name()}, PyTorch {torch.__version__}, CUDA {torch.version.cuda}",
        "copy_gbs": round(ceiling / 1e9), "labels": labels,
        "command": "python3 " + " ".join(shlex.quote(a) for a in [os.path.relpath(__file__, REPO)] + sys.argv[1:]),
        "results": []}
    for problem in problems:
        if not any(glob.glob(os.path.join(args.candidates, label, os.path.basename(problem))) for label in labels):
            continue
        try:
            row = one(args, problem, labels, builder, ceiling)
        except Exception as exc:  # one problem's failure is its row, the others still run
            row = {"problem": problem, "why": {"all": f"{type(exc).__name__}: {exc}"[:300]}}
        doc["results"].append(row)
        print(json.dumps(row), flush=True)
        write_results(args.out, doc, markdown(doc))
        torch.cuda.empty_cache()
    shutil.rmtree(os.path.join(args.out, "builds"), ignore_errors=True)
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
